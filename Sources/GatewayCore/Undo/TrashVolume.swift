import Foundation

/// One trash folder: `files/NAME` holds a trashed item, and a record says where it came from and
/// when. The hooks a backend provides; ``Trash`` holds the logic.
///
/// A Local remote uses the desktop's trash of each file system (`~/.local/share/Trash`,
/// `$topdir/.Trash-$uid`), whose records are FreeDesktop `info/NAME.trashinfo` files
/// (``TrashInfo``). A network remote's trash is a folder on the remote itself
/// (``ProviderTrashVolume``) whose records are the item names themselves, so that trashing is one
/// server-side rename and listing the trash one folder listing.
public protocol TrashVolume: Sendable {
    /// Names this trash in undo records and listings (the trash folder's path).
    var identifier: String { get }
    /// The trash folder's path on the provider when it lies inside the provider's tree: listings
    /// for copies skip it. `nil` when it lies outside (the desktop trash of a Local remote).
    var folderPath: String? { get }

    /// Claims a name for an item about to be trashed, and keeps its record `info` (making the
    /// trash's folders where they are missing). `base` is the item's own name; `attempt` counts
    /// from 1. Returns the name, or `nil` when this attempt's name is taken (the next is tried).
    func reserve(_ info: TrashInfo, base: String, attempt: Int) async throws -> String?
    /// The record of the item `name`.
    func info(of name: String) async throws -> TrashInfo
    /// Drops the record of `name` once its item left the trash (absent is fine).
    func removeInfo(of name: String) async throws
    /// The items in this trash, as listed (never all held at once), with their attributes where
    /// the listing gives them.
    func entries() -> PullSequence<TrashEntry>
    /// Renames the provider's item at `path` to `files/NAME`: one server-side rename, never a copy.
    /// Returns the name the item has in the trash: `name`, or the server's own where the server
    /// names what it trashes (Nextcloud's and ownCloud's trash bins).
    func moveIn(_ path: String, as name: String) async throws -> String
    /// Renames `files/NAME` to `path` on the provider; fails when something is there.
    func moveOut(_ name: String, to path: String) async throws
    /// What `files/NAME` is, or `nil` when it is gone.
    func attributes(of name: String) async throws -> FileObject?
    /// Removes `files/NAME` for good, with everything in it.
    func removeContent(of name: String) async throws
    /// The `Path` to record for the provider's `path`.
    func recordedPath(for path: String) -> String
    /// The provider's path for a recorded `Path`, or `nil` when it lies outside the provider.
    func providerPath(forRecorded recorded: String) -> String?
}

/// One item of a trash as its listing gives it.
public struct TrashEntry: Sendable, Hashable {
    /// Its name in the trash.
    public var name: String
    /// Its attributes, when the listing had them (`nil`: looked up when needed).
    public var attributes: FileObject?

    /// Creates an entry.
    public init(name: String, attributes: FileObject? = nil) {
        self.name = name
        self.attributes = attributes
    }
}

/// Finds the trash for an item: one per remote, or (Local) one per file system.
public protocol TrashLocator: Sendable {
    /// The trash that items at `path` go to (made when missing).
    func volume(for path: String) async throws -> any TrashVolume
    /// The trashes that may hold items from `path` and below, for listings (only existing ones).
    func volumes(under path: String) async throws -> [any TrashVolume]
    /// The trash with this ``TrashVolume/identifier`` (from an undo record or a listing), or `nil`.
    func volume(identifier: String) async throws -> (any TrashVolume)?
    /// Whether the folder at `path` on the provider is a trash folder (copies skip it), without a
    /// request: a Local remote recognises the `.Trash-$uid` of any file system mounted below it.
    func isTrashFolder(_ path: String) -> Bool
}

/// The config keys every backend with a trash shares, and their values.
public struct TrashSettings: Sendable, Hashable {
    /// Whether removals and overwrites go to the trash (`trash`, default true).
    public var enabled: Bool
    /// The trash folder's path relative to the remote's root (`trash_dir`), or `nil` for the backend's default.
    public var folder: String?

    /// Creates settings.
    public init(enabled: Bool = true, folder: String? = nil) {
        self.enabled = enabled
        self.folder = folder
    }

    /// The folder network remotes use by default, at their root.
    public static let defaultFolder = ".gateway-trash"

    /// `trash` and `trash_dir`, for a ``ProviderDescriptor``'s keys.
    public static func configKeys(folderSummary: String) -> [ConfigKey] {
        [
            ConfigKey("trash", .boolean, default: "true",
                      summary: "removals and overwrites by the gateway go to the remote's trash, so `gateway undo` can revert them; false makes them permanent (for servers where a rename costs a copy)"),
            ConfigKey("trash_dir", .string, summary: folderSummary),
        ]
    }

    /// Reads `trash` and `trash_dir` from a remote's configuration.
    public init(_ remote: RemoteConfiguration) {
        self.init(enabled: remote.boolean("trash") ?? true, folder: remote.string("trash_dir"))
    }

    /// Problems with `trash_dir`: the remote's root, or a path climbing above it.
    public static func problems(_ remote: RemoteConfiguration) -> [ProviderDescriptor.Problem] {
        guard remote.string("trash_dir") != nil else { return [] }
        do {
            _ = try TrashSettings(remote).folderPath()
            return []
        } catch {
            return [.init(key: "trash_dir", message: "key \"trash_dir\" must name a folder below the remote's root: \(ErrorMessage.reason(for: error))")]
        }
    }

    /// The trash folder on the provider: `/` + ``folder`` (or the default), normalized.
    public func folderPath(default fallback: String = TrashSettings.defaultFolder) throws -> String {
        let path = try RemotePath.normalize("/" + (folder ?? fallback))
        guard path != "/" else { throw FileProviderError.invalidPath(path: folder ?? "", reason: "the trash cannot be the remote's root") }
        return path
    }
}
