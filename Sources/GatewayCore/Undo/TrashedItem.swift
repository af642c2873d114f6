public import Foundation

/// One item in a remote's trash, as ``Trash/items(under:)`` lists it.
public struct TrashedItem: Sendable, Hashable {
    /// Its name in the trash (`files/NAME`, with `info/NAME.trashinfo` beside it).
    public var name: String
    /// Which trash holds it (``TrashVolume/identifier``).
    public var volume: String
    /// Where it was: a path on the provider. `nil` when it came from outside the provider's root
    /// (a Local remote shares the desktop's trash with every other folder).
    public var originalPath: String?
    /// The original location as the trash records it (a host path in a desktop trash).
    public var recordedPath: String
    /// When it was trashed, if the record says.
    public var deletionDate: Date?
    /// File or folder, and its size, as far as the trash can tell without reading it.
    public var type: FileObjectType?
    /// Size in bytes (files).
    public var size: Int64?

    /// Creates an item.
    public init(name: String, volume: String, originalPath: String?, recordedPath: String, deletionDate: Date?,
                type: FileObjectType? = nil, size: Int64? = nil) {
        self.name = name
        self.volume = volume
        self.originalPath = originalPath
        self.recordedPath = recordedPath
        self.deletionDate = deletionDate
        self.type = type
        self.size = size
    }
}
