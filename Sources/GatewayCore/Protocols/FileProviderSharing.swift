public import Foundation

/// Public links: a provider that can hand out a URL through which anyone can read an item (a file,
/// or a folder and what is below it) without the remote's credentials.
///
/// Built-in providers offer it in two ways: Nextcloud and ownCloud remotes through the server's
/// own share API, and every remote through the gateway's link server when the configuration has a
/// `links` object (signed links answered by `gateway serve links`; the shared implementation is
/// `GatewayLinkSharing` in GatewayState). Where neither is set up, `as? any FileProviderSharing`
/// fails: the ability is offered exactly where it works.
public protocol FileProviderSharing: FileProviderBasic {
    /// A public link to the item at `path`, which must exist; it stops working after
    /// `expiresAfter` (never for `nil`; some servers keep expiry dates by the day).
    ///
    /// - Throws: a not-found error for a missing item; a `ConfigError` when the links
    ///   configuration's secret cannot be read.
    func publicLink(to path: String, expiresAfter: Duration?) async throws -> URL
    /// Revokes every public link to the item at `path` made so far.
    func revokePublicLinks(to path: String) async throws
}
