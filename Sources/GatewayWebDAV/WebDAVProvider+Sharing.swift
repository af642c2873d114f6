public import Foundation
public import GatewayCore
public import GatewayState
public import GatewayTransport
public import Logging

/// A ``WebDAVProvider`` that also makes public links (``FileProviderSharing``) through the
/// gateway's link server: what the registry creates for a plain WebDAV remote when the
/// configuration has a `links` object.
public final class WebDAVProviderWithLinks: WebDAVProvider, GatewayLinkSharing, @unchecked Sendable {
    public let publicLinks: PublicLinks

    /// A provider whose links are `links`; the other parameters as ``WebDAVProvider``'s.
    public init(links: PublicLinks, configuration: HTTPClientConfiguration, vendor: Vendor = .other, rangedUploads: Bool = true,
                atomicPut: AtomicPut = .auto, syncCollection: SyncCollection = .auto, deadProperties: Bool = false,
                trash: TrashSettings = TrashSettings(), stateDirectory: URL = StateLocation.directory(),
                logger: Logger = Logger(label: "gateway.webdav")) {
        self.publicLinks = links
        super.init(configuration: configuration, vendor: vendor, rangedUploads: rangedUploads, atomicPut: atomicPut,
                   syncCollection: syncCollection, deadProperties: deadProperties, trash: trash, stateDirectory: stateDirectory, logger: logger)
    }
}

/// A Nextcloud or ownCloud remote (`vendor`), whose public links are the server's own: read-only
/// public link shares through its OCS Share API, listed in its web interface like any other.
/// What the registry creates for those vendors when the URL is one of the server's WebDAV
/// endpoints (`…/remote.php/dav/files/USER/` or `…/remote.php/webdav/`).
public final class WebDAVProviderWithShares: WebDAVProvider, FileProviderSharing, @unchecked Sendable {
    let shares: OCSShares

    /// A provider for a Nextcloud or ownCloud server; `nil` when the configuration's URL is not one
    /// of its WebDAV endpoints. The other parameters as ``WebDAVProvider``'s.
    public init?(sharing configuration: HTTPClientConfiguration, vendor: Vendor, rangedUploads: Bool = true,
                 atomicPut: AtomicPut = .auto, syncCollection: SyncCollection = .auto, deadProperties: Bool = false,
                 trash: TrashSettings = TrashSettings(), stateDirectory: URL = StateLocation.directory(),
                 logger: Logger = Logger(label: "gateway.webdav")) {
        guard vendor != .other, let shares = OCSShares(baseURL: configuration.baseURL) else { return nil }
        self.shares = shares
        super.init(configuration: configuration, vendor: vendor, rangedUploads: rangedUploads, atomicPut: atomicPut,
                   syncCollection: syncCollection, deadProperties: deadProperties, trash: trash, stateDirectory: stateDirectory, logger: logger)
    }

    /// Creates a read-only public link share of the item at `path`. The server keeps expiry dates
    /// by the day: `expiresAfter` is rounded up to the end of the day it falls on (UTC).
    public func publicLink(to path: String, expiresAfter: Duration?) async throws -> URL {
        let normalized = try RemotePath.normalize(path)
        let expires = expiresAfter.map { Date().addingTimeInterval(TimeInterval($0.components.seconds)) }
        return try await shares.create(normalized, expires: expires, client: client)
    }

    /// Deletes every public link share of the item at `path`.
    public func revokePublicLinks(to path: String) async throws {
        try await shares.revoke(try RemotePath.normalize(path), client: client)
    }
}
