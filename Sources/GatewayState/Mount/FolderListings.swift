public import Foundation
public import GatewayCore

/// The last listing a mount had of each folder it listed in full, kept in the state store
/// (`mount.sqlite`) by cache folder and kept true by the changes the mount makes and the monitor
/// reports: what the mount shows of a folder while the remote does not answer.
public final class FolderListings: Sendable {
    private let store: StateStore
    /// The cache folder whose listings these are.
    public let cacheFolder: String

    /// One change to the stored listings.
    public enum Change: Sendable {
        /// `item` is now in its folder (added or changed); nothing when the folder isn't stored.
        case put(FileObject)
        /// The item at the path is gone, with what was under it.
        case remove(String)
        /// The folder at the path was made (empty).
        case emptyFolder(String)
        /// The item at the first path was renamed to the second (replacing what was there), with
        /// the listings kept of what is under it.
        case move(String, to: String)
    }

    /// The listings of the cache folder `cacheFolder`, in the state folder `directory`.
    public static func open(directory: URL, cacheFolder: String) throws -> FolderListings {
        FolderListings(store: try MountStateFile.open(directory: directory), cacheFolder: cacheFolder)
    }

    private init(store: StateStore, cacheFolder: String) {
        self.store = store
        self.cacheFolder = cacheFolder
    }

    /// Stores `items` as the whole listing of `folder`.
    public func replace(folder: String, with items: [FileObject]) throws {
        try store.write { database in
            try database.run("DELETE FROM mount_listing WHERE cache_folder = ? AND folder = ?", [.text(cacheFolder), .text(folder)])
            try database.run("INSERT OR IGNORE INTO mount_listed(cache_folder, folder) VALUES (?, ?)", [.text(cacheFolder), .text(folder)])
            for item in items { try insert(item, in: folder, database: database) }
        }
    }

    /// The stored listing of `folder` (`nil`: never listed in full, or since dropped).
    public func items(in folder: String) throws -> [FileObject]? {
        try store.withDatabase { database in
            guard try database.integer("SELECT COUNT(*) FROM mount_listed WHERE cache_folder = ? AND folder = ?",
                                       [.text(cacheFolder), .text(folder)]) == 1 else { return nil }
            let statement = try database.statement(
                "SELECT name, type, size, modified, version FROM mount_listing WHERE cache_folder = ? AND folder = ? ORDER BY name",
                [.text(cacheFolder), .text(folder)])
            defer { statement.reset() }
            var result: [FileObject] = []
            while try statement.step() {
                guard let name = statement.text(0), let type = statement.text(1).flatMap(FileObjectType.init(rawValue:)) else { continue }
                result.append(FileObject(path: (folder == "/" ? "" : folder) + "/" + name, type: type,
                                         size: statement.isNull(2) ? nil : statement.integer(2),
                                         modificationDate: statement.isNull(3) ? nil : Date(timeIntervalSince1970: statement.real(3)),
                                         versionTag: statement.text(4)))
            }
            return result
        }
    }

    /// What the stored listing of `folder` says of `name`: `.some(nil)` when the folder is stored
    /// without it, `nil` when the folder is not stored.
    public func item(named name: String, in folder: String) throws -> FileObject?? {
        try store.withDatabase { database in
            guard try database.integer("SELECT COUNT(*) FROM mount_listed WHERE cache_folder = ? AND folder = ?",
                                       [.text(cacheFolder), .text(folder)]) == 1 else { return nil }
            let statement = try database.statement(
                "SELECT type, size, modified, version FROM mount_listing WHERE cache_folder = ? AND folder = ? AND name = ?",
                [.text(cacheFolder), .text(folder), .text(name)])
            defer { statement.reset() }
            guard try statement.step(), let type = statement.text(0).flatMap(FileObjectType.init(rawValue:)) else { return .some(nil) }
            return FileObject(path: (folder == "/" ? "" : folder) + "/" + name, type: type,
                              size: statement.isNull(1) ? nil : statement.integer(1),
                              modificationDate: statement.isNull(2) ? nil : Date(timeIntervalSince1970: statement.real(2)),
                              versionTag: statement.text(3))
        }
    }

    /// Applies `changes` in one transaction.
    public func apply(_ changes: [Change]) throws {
        guard !changes.isEmpty else { return }
        try store.write { database in
            for change in changes {
                switch change {
                case .put(let item):
                    let folder = Self.parent(of: item.path)
                    guard try database.integer("SELECT COUNT(*) FROM mount_listed WHERE cache_folder = ? AND folder = ?",
                                               [.text(cacheFolder), .text(folder)]) == 1 else { continue }
                    try insert(item, in: folder, database: database)
                case .emptyFolder(let folder):
                    try database.run("INSERT OR IGNORE INTO mount_listed(cache_folder, folder) VALUES (?, ?)", [.text(cacheFolder), .text(folder)])
                case .remove(let path):
                    try remove(path, database: database)
                case .move(let source, let target):
                    try move(source, to: target, database: database)
                }
            }
        }
    }

    private func remove(_ path: String, database: SQLiteDatabase) throws {
        let (lower, upper) = DeadPropertyStore.descendants(of: path)
        try database.run("DELETE FROM mount_listing WHERE cache_folder = ? AND folder = ? AND name = ?",
                         [.text(cacheFolder), .text(Self.parent(of: path)), .text((path as NSString).lastPathComponent)])
        for table in ["mount_listing", "mount_listed"] {
            try database.run("DELETE FROM \(table) WHERE cache_folder = ? AND (folder = ? OR (folder >= ? AND folder < ?))",
                             [.text(cacheFolder), .text(path), .text(lower), .text(upper)])
        }
    }

    /// Renames the row of `source` in its folder's listing and moves the listings kept under it.
    private func move(_ source: String, to target: String, database: SQLiteDatabase) throws {
        guard source != target else { return }
        let statement = try database.statement(
            "SELECT type, size, modified, version FROM mount_listing WHERE cache_folder = ? AND folder = ? AND name = ?",
            [.text(cacheFolder), .text(Self.parent(of: source)), .text((source as NSString).lastPathComponent)])
        let row: FileObject? = try statement.step() ? statement.text(0).flatMap(FileObjectType.init(rawValue:)).map { type in
            FileObject(path: target, type: type, size: statement.isNull(1) ? nil : statement.integer(1),
                       modificationDate: statement.isNull(2) ? nil : Date(timeIntervalSince1970: statement.real(2)),
                       versionTag: statement.text(3))
        } : nil
        statement.reset()
        try remove(target, database: database)
        try database.run("DELETE FROM mount_listing WHERE cache_folder = ? AND folder = ? AND name = ?",
                         [.text(cacheFolder), .text(Self.parent(of: source)), .text((source as NSString).lastPathComponent)])
        if let row, try database.integer("SELECT COUNT(*) FROM mount_listed WHERE cache_folder = ? AND folder = ?",
                                         [.text(cacheFolder), .text(Self.parent(of: target))]) == 1 {
            try insert(row, in: Self.parent(of: target), database: database)
        }
        // What is under it: `source` and `source/...` become `target` and `target/...` (SQLite
        // counts characters as Unicode scalars).
        let (lower, upper) = DeadPropertyStore.descendants(of: source)
        let rest = source.unicodeScalars.count + 1
        for table in ["mount_listing", "mount_listed"] {
            try database.run("""
                UPDATE \(table) SET folder = ? || substr(folder, ?) WHERE cache_folder = ? AND (folder = ? OR (folder >= ? AND folder < ?))
                """, [.text(target), .integer(Int64(rest)), .text(cacheFolder), .text(source), .text(lower), .text(upper)])
        }
    }

    private func insert(_ item: FileObject, in folder: String, database: SQLiteDatabase) throws {
        let shown = item.sourceStamp?.modificationDate ?? item.modificationDate
        try database.run("""
            INSERT OR REPLACE INTO mount_listing(cache_folder, folder, name, type, size, modified, version) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.text(cacheFolder), .text(folder), .text((item.path as NSString).lastPathComponent), .text(item.type.rawValue),
                  item.size.map { .integer($0) } ?? .null, shown.map { .real($0.timeIntervalSince1970) } ?? .null,
                  item.versionTag.map { .text($0) } ?? .null])
    }

    static func parent(of path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "/" : parent
    }
}
