/// Symbolic links made and read as links: their target text, not what it points to.
///
/// Listings already describe a link as ``FileObjectType/symbolicLink`` (with its target under
/// `"symlink_target"` in ``FileObject/extraProperties`` where the backend says it); this
/// capability makes one and reads its target. Only a backend that keeps links as links conforms
/// (Local); a WebDAV or FTP server has no request to make one. `gateway mount` answers the
/// kernel's `symlink` and `readlink` with it.
public protocol FileProviderSymbolicLinks: FileProviderBasic {
    /// Makes a symbolic link at `path` whose target is `target`, kept as given: relative to the
    /// link's folder, or absolute. The target need not exist.
    ///
    /// - Throws: already exists (whatever is at `path`), not found (no parent folder), or an
    ///   invalid path for an empty target or one with a NUL byte.
    /// - Returns: the link's attributes.
    @discardableResult
    func createSymbolicLink(at path: String, target: String) async throws -> FileObject

    /// The target text of the symbolic link at `path`.
    ///
    /// - Throws: not found, or an invalid path when the item is not a symbolic link.
    func destinationOfSymbolicLink(at path: String) async throws -> String
}
