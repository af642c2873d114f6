public import Foundation

/// What a ``FileProviderCache``'s files hold, kept in the state store (`mount.sqlite`) by cache
/// folder, so the contents fetched by one run are there for the next: one row per cache file,
/// with the item version it holds bytes of and which ranges. A row is written only after its
/// file's bytes are on disk (`fdatasync`), so a power cut never makes the index claim bytes the
/// file lost.
public final class CacheIndex: Sendable {
    private let store: StateStore
    /// The cache folder whose files these are.
    public let cacheFolder: String

    /// One cache file.
    public struct Row: Sendable, Equatable {
        /// The file's name in the cache's folder.
        public var file: String
        public var key: FileProviderCache.Key
        public var ranges: [Range<Int64>]
    }

    /// The index of the cache folder `cacheFolder`, in the state folder `directory`.
    public static func open(directory: URL, cacheFolder: String) throws -> CacheIndex {
        CacheIndex(store: try MountStateFile.open(directory: directory), cacheFolder: cacheFolder)
    }

    private init(store: StateStore, cacheFolder: String) {
        self.store = store
        self.cacheFolder = cacheFolder
    }

    /// Every row.
    public func rows() throws -> [Row] {
        try store.withDatabase { database in
            let statement = try database.statement("SELECT file, path, version, size, ranges FROM cache_entries WHERE cache_folder = ?",
                                                   [.text(cacheFolder)])
            defer { statement.reset() }
            var result: [Row] = []
            while try statement.step() {
                guard let file = statement.text(0), let path = statement.text(1), let version = statement.text(2),
                      let ranges = Self.ranges(statement.text(4) ?? "") else { continue }
                result.append(Row(file: file, key: FileProviderCache.Key(path: path, version: version, size: statement.integer(3)),
                                  ranges: ranges))
            }
            return result
        }
    }

    /// Writes `rows` and removes the rows of `removed` files, in one transaction.
    public func update(_ rows: [Row], removing removed: [String]) throws {
        guard !rows.isEmpty || !removed.isEmpty else { return }
        try store.write { database in
            for name in removed {
                try database.run("DELETE FROM cache_entries WHERE cache_folder = ? AND file = ?", [.text(cacheFolder), .text(name)])
            }
            for row in rows {
                try database.run("""
                    INSERT OR REPLACE INTO cache_entries(cache_folder, file, path, version, size, ranges) VALUES (?, ?, ?, ?, ?, ?)
                    """, [.text(cacheFolder), .text(row.file), .text(row.key.path), .text(row.key.version), .integer(row.key.size),
                          .text(row.ranges.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ","))])
            }
        }
    }

    /// Removes every row (the cache folder was emptied).
    public func removeAll() throws {
        try store.write { database in try database.run("DELETE FROM cache_entries WHERE cache_folder = ?", [.text(cacheFolder)]) }
    }

    /// `"0-10,20-30"` as ranges; `nil` for anything else (a damaged row is dropped).
    static func ranges(_ text: String) -> [Range<Int64>]? {
        guard !text.isEmpty else { return [] }
        var result: [Range<Int64>] = []
        for part in text.split(separator: ",") {
            let bounds = part.split(separator: "-")
            guard bounds.count == 2, let lower = Int64(bounds[0]), let upper = Int64(bounds[1]), 0 <= lower, lower < upper else { return nil }
            result.append(lower..<upper)
        }
        return result
    }
}
