public import Foundation
public import GatewayCore
import Synchronization

/// Public links of one remote through the gateway's link server (`gateway serve links`): signed
/// tokens under the configuration's `links.base_url`, and revocations in the local state store.
///
/// The shared implementation of ``FileProviderSharing`` for every provider that has no sharing of
/// its own: a provider adopts ``GatewayLinkSharing`` and holds one of these.
public final class PublicLinks: Sendable {
    /// The `links` configuration.
    public let configuration: LinksConfiguration
    /// The remote's name in the configuration (the server resolves it by this name).
    public let remote: String
    private let stateDirectory: URL
    private let environment: [String: String]
    /// The signing secret, resolved on first use (so a broken `links` object fails `gateway
    /// link`, not every command).
    private let secret = Mutex<[UInt8]?>(nil)

    /// Links for `remote` under `configuration`; revocations go to the state folder `stateDirectory`.
    public init(configuration: LinksConfiguration, remote: String, stateDirectory: URL, environment: [String: String]) {
        self.configuration = configuration
        self.remote = remote
        self.stateDirectory = stateDirectory
        self.environment = environment
    }

    /// A link to the item at `path` (a folder when `isFolder`), named `name` in the URL, expiring
    /// after `expiresAfter` (never for `nil`).
    ///
    /// - Throws: ``ConfigError`` when the secret cannot be resolved.
    public func link(to path: String, name: String, isFolder: Bool, expiresAfter: Duration?, now: Date = Date()) throws -> URL {
        var issued = LinkToken.milliseconds(now)
        // A link made in the millisecond of a revocation (or on a clock behind it) is still new.
        if let revoked = try LinkRevocations.open(directory: stateDirectory).revokedMilliseconds(remote: remote, path: path), revoked >= issued,
           revoked < UInt64.max {
            issued = revoked + 1
        }
        var expires: UInt64?
        if let expiresAfter {
            let (seconds, attoseconds) = expiresAfter.components
            guard seconds > 0 || (seconds == 0 && attoseconds > 0) else {
                throw FileProviderError.invalidPath(path: path, reason: "a link's expiry must be in the future")
            }
            // Saturating: an expiry past the year 584 million is never.
            let milliseconds = UInt64(seconds).multipliedReportingOverflow(by: 1000)
            let sum = issued.addingReportingOverflow(milliseconds.partialValue)
            expires = milliseconds.overflow || sum.overflow ? UInt64.max : max(sum.partialValue, issued + 1)
        }
        let token = try LinkToken(remote: remote, path: path, issuedMilliseconds: issued, expiresMilliseconds: expires).encoded(secret: resolvedSecret())
        var text = configuration.baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += "/s/" + token + "/"
        if !name.isEmpty {
            text += name.addingPercentEncoding(withAllowedCharacters: Self.segmentCharacters) ?? ""
            if isFolder { text += "/" }
        }
        guard let url = URL(string: text) else { throw FileProviderError.invalidPath(path: path, reason: "cannot be put in a link") }
        return url
    }

    /// Revokes every link to `path` made until now.
    public func revoke(_ path: String, now: Date = Date()) throws {
        try LinkRevocations.open(directory: stateDirectory).revoke(remote: remote, path: path, now: now)
    }

    private func resolvedSecret() throws -> [UInt8] {
        if let known = secret.withLock({ $0 }) { return known }
        let resolved = try configuration.secret(environment: environment)
        secret.withLock { $0 = resolved }
        return resolved
    }

    /// Characters left as they are in a path segment of a link.
    package static let segmentCharacters: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        set.insert(charactersIn: "-._~!$&'()*+,;=:@")
        return set
    }()
}

/// ``FileProviderSharing`` through the gateway's link server, implemented once: a provider adopts
/// this protocol and returns its ``PublicLinks``. Built-in providers do when the configuration
/// has a `links` object (`LocalFileProvider`, `WebDAVProvider` and `FTPProvider` are then
/// created as their `…WithLinks` subclasses), so `as? FileProviderSharing` finds the ability
/// exactly where it works.
public protocol GatewayLinkSharing: FileProviderSharing {
    /// The remote's links.
    var publicLinks: PublicLinks { get }
}

extension GatewayLinkSharing {
    /// A link to the item at `path` (which must exist) through the link server.
    public func publicLink(to path: String, expiresAfter: Duration?) async throws -> URL {
        let item = try await attributesOfItem(path: path)
        return try publicLinks.link(to: item.path, name: item.path == "/" ? "" : item.name, isFolder: item.isDirectory, expiresAfter: expiresAfter)
    }

    /// Revokes every link to `path` made so far (recorded in the local state store; the link
    /// server answers them 404 from then on).
    public func revokePublicLinks(to path: String) async throws {
        try publicLinks.revoke(try RemotePath.normalize(path))
    }
}
