import Foundation
import GatewayCore

/// A name compared by its bytes: Swift's `String` equality treats canonically equivalent names
/// (NFC `é` and NFD `e` + accent) as one, where file systems and servers keep two items.
struct NameKey: Hashable {
    let bytes: [UInt8]
    init(_ name: String) { bytes = Array(name.utf8) }
}

/// One item as the snapshot remembers it.
struct SnapshotEntry: Sendable, Hashable {
    /// Path relative to the watched folder (`"a/b.txt"`; members of the folder have no `/`).
    var relativePath: String
    var type: FileObjectType
    var size: Int64?
    /// Modification time in nanoseconds since 1970 (saturated), when known.
    var modified: Int64?
    /// The backend's version tag (ETag, `size-mtime` stamp).
    var tag: String?
    /// What stays the same when the item is renamed (an inode; a file's ETag), for pairing a removal
    /// with a creation into a rename.
    var identity: String?

    init(relativePath: String, type: FileObjectType, size: Int64?, modified: Int64?, tag: String?, identity: String?) {
        self.relativePath = relativePath
        self.type = type
        self.size = size
        self.modified = modified
        self.tag = tag
        self.identity = identity
    }

    init(relativePath: String, item: FileObject, identity: String?) {
        self.init(relativePath: relativePath, type: item.type, size: item.type == .directory ? nil : item.size,
                  modified: item.modificationDate.map(SnapshotEntry.nanoseconds), tag: item.versionTag.map(SnapshotEntry.strongTag),
                  identity: identity.map(SnapshotEntry.strongTag))
    }

    /// An HTTP ETag without its weak marker: Apache answers `W/"x"` for a file changed within the
    /// last second and `"x"` for the same file later, which is no change.
    static func strongTag(_ tag: String) -> String {
        tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }

    /// Whether `other` (the same path, seen later) differs in content or attributes. Folders are
    /// never "modified": their time changes with their members, which are reported themselves.
    func differs(from other: SnapshotEntry) -> Bool {
        if type == .directory && other.type == .directory { return false }
        if size != other.size { return true }
        if let tag, let otherTag = other.tag, tag != otherTag { return true }
        if let modified, let otherModified = other.modified, modified != otherModified { return true }
        return false
    }

    /// Nanoseconds since 1970, clamped to what an `Int64` holds.
    static func nanoseconds(_ date: Date) -> Int64 {
        let value = date.timeIntervalSince1970 * 1e9
        if value.isNaN { return 0 }
        if value >= 9.2e18 { return Int64.max }
        if value <= -9.2e18 { return Int64.min }
        return Int64(value)
    }

    static func parent(of relativePath: String) -> String {
        guard let slash = relativePath.lastIndex(of: "/") else { return "" }
        return String(relativePath[..<slash])
    }

    static func name(of relativePath: String) -> String {
        guard let slash = relativePath.lastIndex(of: "/") else { return relativePath }
        return String(relativePath[relativePath.index(after: slash)...])
    }

    static func join(_ parent: String, _ name: String) -> String { parent.isEmpty ? name : parent + "/" + name }
}

/// The tables of a monitor store: the last snapshot of the watched tree, and the log of the changes
/// found between snapshots (a change's `seq` is its position; anchors name a position).
enum SnapshotSchema {
    static let schema = StateSchema(name: "monitor", migrations: [
        """
        CREATE TABLE entries(
            parent TEXT NOT NULL, name TEXT NOT NULL, type INTEGER NOT NULL,
            size INTEGER, modified INTEGER, tag TEXT, identity TEXT,
            PRIMARY KEY(parent, name)) WITHOUT ROWID;
        CREATE TABLE changes(
            seq INTEGER PRIMARY KEY AUTOINCREMENT, kind INTEGER NOT NULL, path TEXT NOT NULL, previous_path TEXT,
            type INTEGER, size INTEGER, modified INTEGER, tag TEXT, recorded_at INTEGER NOT NULL);
        """,
        // Per-folder sync tokens of servers that report changes since a token (RFC 6578).
        "CREATE TABLE sync_tokens(folder TEXT PRIMARY KEY, token TEXT NOT NULL) WITHOUT ROWID;",
    ])

    static func typeCode(_ type: FileObjectType) -> Int64 {
        switch type {
        case .file: return 0
        case .directory: return 1
        case .symbolicLink: return 2
        case .other: return 3
        }
    }

    static func type(_ code: Int64) -> FileObjectType {
        switch code {
        case 1: return .directory
        case 2: return .symbolicLink
        case 3: return .other
        default: return .file
        }
    }

    static func kindCode(_ kind: FileChangeEvent.Kind) -> Int64 {
        switch kind {
        case .created: return 0
        case .modified: return 1
        case .removed: return 2
        case .renamed: return 3
        }
    }

    static func kind(_ code: Int64) -> FileChangeEvent.Kind {
        switch code {
        case 1: return .modified
        case 2: return .removed
        case 3: return .renamed
        default: return .created
        }
    }
}

/// Queries on a monitor store; every method runs inside the caller's transaction or lock.
extension SQLiteDatabase {
    /// The remembered members of `parent`, by name.
    func snapshotChildren(of parent: String) throws -> [NameKey: SnapshotEntry] {
        let statement = try statement("SELECT name, type, size, modified, tag, identity FROM entries WHERE parent = ?", [.text(parent)])
        var children: [NameKey: SnapshotEntry] = [:]
        while try statement.step() {
            let name = statement.text(0) ?? ""
            children[NameKey(name)] = SnapshotEntry(relativePath: SnapshotEntry.join(parent, name), type: SnapshotSchema.type(statement.integer(1)),
                                           size: statement.optionalInteger(2), modified: statement.optionalInteger(3),
                                           tag: statement.text(4), identity: statement.text(5))
        }
        return children
    }

    func snapshotUpsert(_ entry: SnapshotEntry) throws {
        try run("""
            INSERT INTO entries(parent, name, type, size, modified, tag, identity) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(parent, name) DO UPDATE SET type = excluded.type, size = excluded.size, modified = excluded.modified,
                tag = excluded.tag, identity = excluded.identity
            """, [.text(SnapshotEntry.parent(of: entry.relativePath)), .text(SnapshotEntry.name(of: entry.relativePath)),
                  .integer(SnapshotSchema.typeCode(entry.type)), .optional(entry.size), .optional(entry.modified),
                  .optional(entry.tag), .optional(entry.identity)])
    }

    /// Forgets an item and, for a folder, everything under it.
    func snapshotRemove(_ relativePath: String) throws {
        try run("DELETE FROM entries WHERE parent = ? AND name = ?",
                [.text(SnapshotEntry.parent(of: relativePath)), .text(SnapshotEntry.name(of: relativePath))])
        try removeSubtree(relativePath)
    }

    /// The condition "`column` is `folder` or lies under it" and its three values. `'0'` is the
    /// character after `'/'`, so under BINARY collation the range holds exactly the paths that
    /// start with `folder/`, and an index on `column` serves it.
    static func inFolder(_ column: String, _ folder: String) -> (sql: String, values: [SQLiteValue]) {
        ("(\(column) = ? OR (\(column) >= ? AND \(column) < ?))", [.text(folder), .text(folder + "/"), .text(folder + "0")])
    }

    /// Forgets everything under a folder (`"a"`: rows whose parent is `a` or starts with `a/`).
    func removeSubtree(_ relativePath: String) throws {
        if relativePath.isEmpty {
            try run("DELETE FROM entries")
        } else {
            let under = Self.inFolder("parent", relativePath)
            try run("DELETE FROM entries WHERE " + under.sql, under.values)
        }
    }

    /// Moves everything under folder `old` to folder `new`.
    func moveSubtree(from old: String, to new: String) throws {
        try removeSubtree(new)
        // substr and length both count characters (not bytes) of text values.
        let under = Self.inFolder("parent", old)
        try run("UPDATE entries SET parent = ? || substr(parent, length(?) + 1) WHERE " + under.sql, [.text(new), .text(old)] + under.values)
    }

    func logChange(_ kind: FileChangeEvent.Kind, path: String, previousPath: String? = nil, entry: SnapshotEntry?, at time: Int64) throws {
        try run("INSERT INTO changes(kind, path, previous_path, type, size, modified, tag, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [.integer(SnapshotSchema.kindCode(kind)), .text(path), .optional(previousPath),
                 .optional(entry.map { SnapshotSchema.typeCode($0.type) }), .optional(entry?.size), .optional(entry?.modified),
                 .optional(entry?.tag), .integer(time)])
    }

    /// The sync token saved for a folder.
    func syncToken(_ folder: String) throws -> String? {
        try text("SELECT token FROM sync_tokens WHERE folder = ?", [.text(folder)])
    }

    func setSyncToken(_ folder: String, _ token: String) throws {
        try run("INSERT INTO sync_tokens(folder, token) VALUES (?, ?) ON CONFLICT(folder) DO UPDATE SET token = excluded.token",
                [.text(folder), .text(token)])
    }

    /// Forgets the tokens of a folder and of every folder under it.
    func removeSyncTokens(under folder: String) throws {
        if folder.isEmpty {
            try run("DELETE FROM sync_tokens")
        } else {
            let under = Self.inFolder("folder", folder)
            try run("DELETE FROM sync_tokens WHERE " + under.sql, under.values)
        }
    }

    /// The newest change's position (0 when none was ever logged).
    func headSequence() throws -> Int64 {
        try integer("SELECT seq FROM sqlite_sequence WHERE name = 'changes'") ?? 0
    }
}
