public import Foundation

/// What kind of item a ``FileObject`` describes.
public enum FileObjectType: String, Sendable, Hashable, Codable, CaseIterable {
    /// A regular file with byte contents.
    case file
    /// A folder (collection) that can hold other items.
    case directory
    /// A symbolic link; ``FileObject/extraProperties`` may carry its target under `"symlink_target"`.
    case symbolicLink = "symlink"
    /// Anything else a backend reports (device node, socket, FIFO).
    case other
}

/// One item on a remote: a value type describing a file, folder or link at one moment.
///
/// Every provider returns the same model, so callers and the copy engine never need to know which
/// backend produced it. Fields a backend cannot report are `nil`.
public struct FileObject: Sendable, Hashable {
    /// The last path component, decoded (no percent-encoding), e.g. `"report 2026.pdf"`.
    public var name: String
    /// The normalized path inside the remote, always starting with `/` (the remote's root is `/`).
    public var path: String
    /// Size in bytes for files and links; `nil` when unknown (usually for folders).
    public var size: Int64?
    /// File, folder, link or other.
    public var type: FileObjectType
    /// Creation (birth) date when the backend knows it.
    public var creationDate: Date?
    /// Last modification date when the backend knows it.
    public var modificationDate: Date?
    /// Hidden by convention (a leading dot) or by a backend attribute.
    public var isHidden: Bool
    /// The current user cannot write the item.
    public var isReadOnly: Bool
    /// MIME type when the backend reports one (e.g. WebDAV `getcontenttype`).
    public var contentType: String?
    /// An opaque version such as an HTTP ETag or a `size-mtime` stamp; changes whenever the content does.
    public var versionTag: String?
    /// Backend-specific properties that do not fit the fields above (string values, keyed by name).
    public var extraProperties: [String: String]
    /// Content hashes the backend reported along with the item (lowercase hexadecimal), such as
    /// Nextcloud's stored SHA-1; empty when it reports none. ``FileProviderHashing`` asks for one.
    public var hashes: [HashAlgorithm: String]
    /// What the gateway recorded about the source this file was copied from, on a remote that
    /// cannot keep modification times (see ``SourceStamp``); `nil` when nothing valid was recorded,
    /// or the listing was not asked for it (``ListingDetails/sourceStamps``).
    public var sourceStamp: SourceStamp?

    /// Creates a file object. Only `path` and `type` are required; the name is derived from the path.
    public init(
        path: String,
        type: FileObjectType,
        size: Int64? = nil,
        creationDate: Date? = nil,
        modificationDate: Date? = nil,
        isHidden: Bool? = nil,
        isReadOnly: Bool = false,
        contentType: String? = nil,
        versionTag: String? = nil,
        extraProperties: [String: String] = [:],
        hashes: [HashAlgorithm: String] = [:],
        sourceStamp: SourceStamp? = nil
    ) {
        let name = RemotePath.lastComponent(of: path)
        self.name = name
        self.path = path
        self.type = type
        self.size = size
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.isHidden = isHidden ?? name.hasPrefix(".")
        self.isReadOnly = isReadOnly
        self.contentType = contentType
        self.versionTag = versionTag
        self.extraProperties = extraProperties
        self.hashes = hashes
        self.sourceStamp = sourceStamp
    }

    /// `true` for folders.
    public var isDirectory: Bool { type == .directory }
    /// `true` for regular files.
    public var isRegularFile: Bool { type == .file }
    /// `true` for symbolic links.
    public var isSymbolicLink: Bool { type == .symbolicLink }
    /// `true` for a symbolic link known to lead to a folder (`extraProperties["target_type"]`).
    public var isLinkToFolder: Bool { type == .symbolicLink && extraProperties["target_type"] == FileObjectType.directory.rawValue }
}
