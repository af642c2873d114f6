public import Foundation

/// Public links: a provider that can hand out a URL through which others can read an item without
/// the remote's credentials (WebDAV servers such as Nextcloud offer this through their share API).
///
/// Implementations arrive with a later issue; the protocol is declared now.
public protocol FileProviderSharing: FileProviderBasic {
    /// Creates (or returns the existing) public link to an item, optionally expiring.
    func publicLink(to path: String, expiresAfter: Duration?) async throws -> URL
    /// Revokes every public link to an item.
    func revokePublicLinks(to path: String) async throws
}
