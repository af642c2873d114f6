public import Foundation

/// The paths pinned in a ``FileProviderCache``, kept in the state store (`mount.sqlite`) by cache
/// folder, so a mount started again keeps what was pinned.
public final class PinList: Sendable {
    private let store: StateStore
    /// The cache folder whose pins these are.
    public let cacheFolder: String

    /// The pins of the cache folder `cacheFolder`, in the state folder `directory`.
    public static func open(directory: URL, cacheFolder: String) throws -> PinList {
        PinList(store: try MountStateFile.open(directory: directory), cacheFolder: cacheFolder)
    }

    private init(store: StateStore, cacheFolder: String) {
        self.store = store
        self.cacheFolder = cacheFolder
    }

    /// Every pinned path.
    public func paths() throws -> [String] {
        try store.withDatabase { database in
            let statement = try database.statement("SELECT path FROM mount_pins WHERE cache_folder = ? ORDER BY path", [.text(cacheFolder)])
            defer { statement.reset() }
            var result: [String] = []
            while try statement.step() { result.append(statement.text(0) ?? "/") }
            return result
        }
    }

    /// Pins `path`.
    public func add(_ path: String) throws {
        try store.write { database in
            try database.run("INSERT OR IGNORE INTO mount_pins(cache_folder, path) VALUES (?, ?)", [.text(cacheFolder), .text(path)])
        }
    }

    /// Unpins `path` and every path under it.
    public func remove(_ path: String) throws {
        let (lower, upper) = DeadPropertyStore.descendants(of: path)
        try store.write { database in
            try database.run("DELETE FROM mount_pins WHERE cache_folder = ? AND (path = ? OR (path >= ? AND path < ?))",
                             [.text(cacheFolder), .text(path), .text(lower), .text(upper)])
        }
    }

    /// Pins at `source` or under it move to `destination` (a rename).
    public func move(from source: String, to destination: String) throws {
        let (lower, upper) = DeadPropertyStore.descendants(of: source)
        let cut = Int64(source.unicodeScalars.count + 1)
        try store.write { database in
            try database.run("""
                UPDATE OR REPLACE mount_pins SET path = ? || substr(path, ?)
                WHERE cache_folder = ? AND (path = ? OR (path >= ? AND path < ?))
                """, [.text(destination), .integer(cut), .text(cacheFolder), .text(source), .text(lower), .text(upper)])
        }
    }
}
