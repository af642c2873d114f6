public import Foundation

/// What one change made by the gateway did, with what it takes to revert it: the unit of an undo
/// journal. Returned by the undoable operations of ``FileProviderUndoable`` and reverted by
/// ``FileProviderUndoable/undo(_:)``.
///
/// A record is `Codable` (JSON in the CLI's journal) and names paths on its provider, never the
/// provider itself: the journal keeps the remote's name beside it.
public struct UndoRecord: Sendable, Hashable, Codable {
    /// The kind of change.
    public enum Operation: String, Sendable, Hashable, Codable, CaseIterable {
        /// An item was removed: into the trash (``trashName``), or for good (``isPermanent``).
        case remove
        /// A file's content was replaced; the previous content is in the trash (``trashName``).
        case overwrite
        /// An item was moved from ``source`` to ``path``; what stood at ``path`` before, if
        /// anything, is in the trash (``trashName``).
        case move
        /// An item was made at ``path`` (a write of a new file, a copy, a folder).
        case create
    }

    /// The kind of change.
    public var operation: Operation
    /// The path the change concerns: the removed or written item, or a move's destination.
    public var path: String
    /// A move's source path.
    public var source: String?
    /// The item in the trash that holds what the change took away.
    public var trashName: String?
    /// Which trash holds ``trashName`` (``TrashVolume/identifier``; a Local remote has one per file system).
    public var trashVolume: String?
    /// What stood at ``path`` right after the change: undo refuses to touch it when it has changed since.
    public var expected: ItemIdentity?
    /// A removal that did not go through the trash (the trash is off, or `--no-trash`): it cannot be undone.
    public var isPermanent: Bool
    /// Written ahead of the change, which may not have happened (the process was killed first):
    /// undo then finds nothing at ``path`` and has nothing to revert, instead of refusing.
    public var isTentative: Bool

    /// Creates a record.
    public init(operation: Operation, path: String, source: String? = nil, trashName: String? = nil, trashVolume: String? = nil,
                expected: ItemIdentity? = nil, isPermanent: Bool = false, isTentative: Bool = false) {
        self.operation = operation
        self.path = path
        self.source = source
        self.trashName = trashName
        self.trashVolume = trashVolume
        self.expected = expected
        self.isPermanent = isPermanent
        self.isTentative = isTentative
    }

    private enum CodingKeys: String, CodingKey {
        case operation, path, source, trashName, trashVolume, expected, isPermanent, isTentative
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        operation = try container.decode(Operation.self, forKey: .operation)
        path = try container.decode(String.self, forKey: .path)
        source = try container.decodeIfPresent(String.self, forKey: .source)
        trashName = try container.decodeIfPresent(String.self, forKey: .trashName)
        trashVolume = try container.decodeIfPresent(String.self, forKey: .trashVolume)
        expected = try container.decodeIfPresent(ItemIdentity.self, forKey: .expected)
        isPermanent = try container.decodeIfPresent(Bool.self, forKey: .isPermanent) ?? false
        isTentative = try container.decodeIfPresent(Bool.self, forKey: .isTentative) ?? false
    }

    /// Whether ``FileProviderUndoable/undo(_:)`` can revert it (a permanent removal cannot).
    public var isUndoable: Bool {
        switch operation {
        case .remove, .overwrite: return !isPermanent && trashName != nil
        case .move: return source != nil
        case .create: return true
        }
    }

    /// One line for listings: `removed /a/b.txt (in the trash)`.
    public var summary: String {
        switch operation {
        case .remove: return "removed \(path)" + (isPermanent ? " (permanently)" : "")
        case .overwrite: return "overwrote \(path)"
        case .move: return "moved \(source ?? "?") to \(path)" + (trashName != nil ? " (replacing a file)" : "")
        case .create: return "created \(path)"
        }
    }
}

/// What identifies one state of an item, to tell whether it changed: its type, size, modification
/// time and version tag (ETag), as far as the backend reports them.
public struct ItemIdentity: Sendable, Hashable, Codable {
    /// File or folder.
    public var type: FileObjectType
    /// Size in bytes (files).
    public var size: Int64?
    /// Modification time.
    public var modificationDate: Date?
    /// The backend's version tag.
    public var versionTag: String?

    /// Creates an identity.
    public init(type: FileObjectType, size: Int64? = nil, modificationDate: Date? = nil, versionTag: String? = nil) {
        self.type = type
        self.size = size
        self.modificationDate = modificationDate
        self.versionTag = versionTag
    }

    /// The identity of `item` as listed.
    public init(_ item: FileObject) {
        self.init(type: item.type, size: item.isDirectory ? nil : item.size,
                  modificationDate: item.isDirectory ? nil : item.modificationDate,
                  versionTag: item.isDirectory ? nil : item.versionTag)
    }

    /// Whether `item` is still this state: same type; for files the same size, and the same version
    /// tag and modification time (within `tolerance` seconds: the remote's time precision) where
    /// both sides know them. A folder matches any folder (its time changes with its contents).
    public func matches(_ item: FileObject, tolerance: Double = 1) -> Bool {
        guard item.type == type else { return false }
        if type == .directory { return true }
        if let size, let other = item.size, size != other { return false }
        if let versionTag, let other = item.versionTag, !VersionTag.same(versionTag, other) { return false }
        if let modificationDate, let other = item.modificationDate,
           abs(modificationDate.timeIntervalSince(other)) >= max(tolerance, 1) {
            return false
        }
        return true
    }
}
