/// Hard links: a second name for a stored file, made by the server without moving its bytes.
///
/// Both names then lead to the same file; removing one keeps the other. (Writes through this
/// library are atomic, so writing to one name later gives that name a new file and leaves the other
/// name with the old one.)
///
/// Backends that can make them conform: Local (`linkat(2)`) and SFTP (`hardlink@openssh.com`).
/// Whether this remote can is ``ProviderCapabilities/Features/hardLinks``: an SFTP server tells it
/// in its first session, as it tells server-side copies; where it is not declared,
/// ``createHardLink(at:to:)`` fails as unsupported.
public protocol FileProviderHardLinks: FileProviderBasic {
    /// Makes `path` a second name of the file at `existing`.
    ///
    /// - Throws: not found (no `existing`, or no parent folder for `path`), already exists (anything
    ///   at `path`), an invalid path when `existing` is a folder, unsupported where the remote has
    ///   no hard links.
    /// - Returns: the new name's attributes.
    @discardableResult
    func createHardLink(at path: String, to existing: String) async throws -> FileObject
}
