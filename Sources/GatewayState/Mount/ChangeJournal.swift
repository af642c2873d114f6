public import Foundation

/// The changes to names a mount made while its remote could not be reached (folders made,
/// items removed, renames), in order, kept in the state store (`mount.sqlite`) by cache folder
/// until they are applied to the remote: when it answers again, or by the next mount with the
/// folder after a crash. File contents are not here: their uploads are in ``UploadQueue``, sent
/// after these changes.
public final class ChangeJournal: Sendable {
    private let store: StateStore
    /// The cache folder whose changes these are.
    public let cacheFolder: String

    /// One change.
    public struct Change: Sendable, Equatable {
        public enum Kind: String, Sendable {
            /// A folder made at `path`.
            case createFolder = "mkdir"
            /// The item at `path` removed (`version`: the version removed; another one there
            /// later was changed on the remote meanwhile and stays).
            case remove
            /// `path` renamed to `target` (replacing what was there).
            case rename
        }

        /// Its place in the order.
        public var sequence: Int64
        public var kind: Kind
        public var path: String
        public var target: String?
        public var version: String?
        /// Whether the item is a folder.
        public var isFolder: Bool

        public init(sequence: Int64 = 0, kind: Kind, path: String, target: String? = nil, version: String? = nil, isFolder: Bool = false) {
            self.sequence = sequence
            self.kind = kind
            self.path = path
            self.target = target
            self.version = version
            self.isFolder = isFolder
        }
    }

    /// The journal of the cache folder `cacheFolder`, in the state folder `directory`.
    public static func open(directory: URL, cacheFolder: String) throws -> ChangeJournal {
        ChangeJournal(store: try MountStateFile.open(directory: directory), cacheFolder: cacheFolder)
    }

    private init(store: StateStore, cacheFolder: String) {
        self.store = store
        self.cacheFolder = cacheFolder
    }

    /// Appends `change` (committed before it returns).
    public func append(_ change: Change) throws {
        try store.write { database in
            let last = try database.integer("SELECT MAX(seq) FROM mount_changes WHERE cache_folder = ?", [.text(cacheFolder)]) ?? 0
            try database.run("""
                INSERT INTO mount_changes(cache_folder, seq, kind, path, target, version, folder) VALUES (?, ?, ?, ?, ?, ?, ?)
                """, [.text(cacheFolder), .integer(last + 1), .text(change.kind.rawValue), .text(change.path),
                      change.target.map { .text($0) } ?? .null, change.version.map { .text($0) } ?? .null,
                      .integer(change.isFolder ? 1 : 0)])
        }
    }

    /// Every change not yet applied, oldest first.
    public func changes() throws -> [Change] {
        try store.withDatabase { database in
            let statement = try database.statement(
                "SELECT seq, kind, path, target, version, folder FROM mount_changes WHERE cache_folder = ? ORDER BY seq", [.text(cacheFolder)])
            defer { statement.reset() }
            var result: [Change] = []
            while try statement.step() {
                guard let kind = statement.text(1).flatMap(Change.Kind.init(rawValue:)), let path = statement.text(2) else { continue }
                result.append(Change(sequence: statement.integer(0), kind: kind, path: path, target: statement.text(3),
                                     version: statement.text(4), isFolder: statement.integer(5) != 0))
            }
            return result
        }
    }

    /// The change `sequence` is applied (or given up).
    public func remove(_ sequence: Int64) throws {
        try store.write { database in
            try database.run("DELETE FROM mount_changes WHERE cache_folder = ? AND seq = ?", [.text(cacheFolder), .integer(sequence)])
        }
    }
}
