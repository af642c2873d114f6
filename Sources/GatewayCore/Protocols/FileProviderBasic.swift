public import Foundation

/// The capability every provider has: look at a remote without changing it.
///
/// Paths are remote paths (`/` is the remote's root; see ``RemotePath``). Other capabilities are
/// separate protocols (``FileProviderOperations``, ``FileProviderReadWrite``, ...) that a caller tests
/// for with `as?`:
///
/// ```swift
/// if let writable = provider as? any FileProviderReadWrite { ... }
/// ```
public protocol FileProviderBasic: Sendable {
    /// The type name used in config files, e.g. `"local"` or `"webdav"`.
    static var type: String { get }

    /// The remote's name in the configuration (used in messages), e.g. `"docs"`.
    var name: String { get }

    /// Where the remote lives: a `file://` URL for local folders, the server URL (without credentials)
    /// for network backends.
    var baseURL: URL { get }

    /// What this provider can do; see ``ProviderCapabilities``.
    var capabilities: ProviderCapabilities { get }

    /// Lists a folder as pages fetched while iterating.
    ///
    /// Entries come in the backend's order, the same for an unchanged folder whatever the page
    /// size: Local sorts by name (byte order of the UTF-8 names, for folders of up to 100,000
    /// entries), network backends keep the server's order. Sort a page yourself where order matters.
    ///
    /// - Parameters:
    ///   - path: the folder.
    ///   - pageSize: the largest number of entries per page (a hint; backends may deliver fewer).
    /// - Returns: a lazy listing; errors (missing folder, not a folder) surface when iterating.
    func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing

    /// Lists a folder as ``contentsOfDirectory(path:pageSize:)`` does, with extra details where the
    /// backend has them (``ListingDetails``). The default ignores `details`.
    func contentsOfDirectory(path: String, pageSize: Int, details: ListingDetails) -> DirectoryListing

    /// Describes one item.
    ///
    /// - Throws: a not-found error (`CocoaError.fileReadNoSuchFile` or HTTP 404) when it does not exist.
    func attributesOfItem(path: String) async throws -> FileObject

    /// Storage usage of the volume holding `path` (quota can differ per folder: mount points,
    /// RFC 4331 quota on WebDAV collections). Figures the backend cannot tell are `nil`; a backend
    /// that can tell nothing throws ``FileProviderError/unsupported(operation:path:)``.
    func storageProperties(path: String) async throws -> VolumeObject

    /// Every item below `path`, parents before their children (see ``walkFolderByFolder(path:pageSize:)``
    /// for the default). Backends with a recursive listing (WebDAV `Depth: infinity`) override it.
    func walk(path: String, pageSize: Int) -> PullSequence<FileObject>

    /// Streams the items under `path` (recursively when asked) for which `matching` returns `true`.
    ///
    /// A default implementation walks the listing; backends with a server-side search may override it.
    func searchFiles(path: String, recursive: Bool, matching: @escaping @Sendable (FileObject) throws -> Bool) -> PullSequence<FileObject>

    /// The URL of an item (without credentials).
    func url(of path: String) throws -> URL

    /// The remote path of a URL that lies inside this remote; throws when it lies outside.
    func relativePathOf(url: URL) throws -> String

    /// Whether the remote answers at all (the root can be read). ``checkReachability()`` says why not.
    func isReachable() async -> Bool
}

extension FileProviderBasic {
    /// Lists the folder without extra details: backends that have none need not implement it.
    public func contentsOfDirectory(path: String, pageSize: Int, details: ListingDetails) -> DirectoryListing {
        contentsOfDirectory(path: path, pageSize: pageSize)
    }

    /// Lists a folder with the default page size (1,000 entries).
    public func contentsOfDirectory(path: String) -> DirectoryListing {
        contentsOfDirectory(path: path, pageSize: 1000)
    }

    /// Storage usage of the remote's root.
    public func storageProperties() async throws -> VolumeObject {
        try await storageProperties(path: "/")
    }

    /// The type name of this provider's class (``type``).
    public var typeName: String { Self.type }

    /// The item at `path`, or `nil` when there is none (other failures are thrown).
    public func itemIfPresent(path: String) async throws -> FileObject? {
        do {
            return try await attributesOfItem(path: path)
        } catch where error.failureKind == .notFound {
            return nil
        }
    }

    /// Every item below `path`, with the default page size.
    public func walk(path: String) -> PullSequence<FileObject> {
        walk(path: path, pageSize: 1000)
    }

    public func walk(path: String, pageSize: Int) -> PullSequence<FileObject> {
        walkFolderByFolder(path: path, pageSize: pageSize)
    }

    /// Walks the tree under `path` folder by folder; see ``TreeWalk/folderByFolder(_:path:pageSize:)``.
    public func walkFolderByFolder(path: String, pageSize: Int = 1000) -> PullSequence<FileObject> {
        TreeWalk.folderByFolder(self, path: path, pageSize: pageSize)
    }

    public func searchFiles(path: String, recursive: Bool, matching: @escaping @Sendable (FileObject) throws -> Bool) -> PullSequence<FileObject> {
        let provider = self
        return PullSequence {
            var source: PullSequence<FileObject>.AsyncIterator?
            var flat: DirectoryListing.Entries.AsyncIterator?
            if recursive {
                source = provider.walk(path: path).makeAsyncIterator()
            } else {
                flat = provider.contentsOfDirectory(path: path).entries.makeAsyncIterator()
            }
            return {
                while true {
                    let item: FileObject?
                    if source != nil { item = try await source!.next() } else { item = try await flat!.next() }
                    guard let item else { return nil }
                    if try matching(item) { return item }
                }
            }
        }
    }

    /// Streams the items under `path` that satisfy a Foundation `Predicate`.
    public func searchFiles(path: String, recursive: Bool, matching predicate: Predicate<FileObject>) -> PullSequence<FileObject> {
        searchFiles(path: path, recursive: recursive) { try predicate.evaluate($0) }
    }

    public func isReachable() async -> Bool {
        (try? await checkReachability()) != nil
    }

    /// Reads the remote's root, and throws why it cannot: not authenticated, cannot connect,
    /// timed out, certificate not trusted, not a directory... (the error to show a user, where
    /// ``isReachable()`` only says no).
    public func checkReachability() async throws {
        let root = try await attributesOfItem(path: "/")
        guard root.isDirectory else { throw CocoaError.posix(ENOTDIR, path: "/", remote: name) }
    }
}

/// Tree walks shared by providers.
public enum TreeWalk {
    /// Walks the tree under `path` depth first, parents before their children, listing one folder at
    /// a time. Only one folder is being listed at any time and only the paths of folders still to
    /// visit are kept, so memory stays small for trees of any size. The items' ``FileObject/path``
    /// are remote paths; use ``RemotePath/relative(_:to:)`` for paths relative to `path`.
    public static func folderByFolder(_ provider: any FileProviderBasic, path: String, pageSize: Int) -> PullSequence<FileObject> {
        PullSequence {
            var pendingFolders: [String] = [path]
            var current: DirectoryListing.Entries.AsyncIterator?
            return {
                while true {
                    if current == nil {
                        guard let folder = pendingFolders.popLast() else { return nil }
                        current = provider.contentsOfDirectory(path: folder, pageSize: pageSize).entries.makeAsyncIterator()
                    }
                    if let item = try await current!.next() {
                        if item.type == .directory { pendingFolders.append(item.path) }
                        return item
                    }
                    current = nil
                }
            }
        }
    }
}
