import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// Nextcloud and ownCloud remotes make public links with the server's own OCS Share API. No
/// Nextcloud runs in the test environment, so these talk to ``OCSShareServer``, which follows the
/// documented requests and answers.
@Suite("WebDAV: Nextcloud/ownCloud public link shares (OCS)")
struct OCSShareTests {
    /// The provider the registry makes for a remote of `vendor` at `url`.
    static func provider(url: String, vendor: String, password: String = "alice-Nc-Pa55word", links: Bool = false) async throws -> any FileProviderBasic {
        let linksJSON = links ? #", "links": {"base_url": "https://links.example.com", "secret_env": "LINK_SECRET"}"# : ""
        let json = #"{"remotes": {"cloud": {"type": "webdav", "url": "\#(url)", "user": "alice", "password": "\#(password)", "vendor": "\#(vendor)"}}\#(linksJSON)}"#
        let registry = Gateway.makeRegistry()
        let configuration = try GatewayConfiguration.parse(data: Data(json.utf8), source: "test.json", registry: registry)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("ocs-\(UUID().uuidString)")
        let resolver = Gateway.makeResolver(configuration: configuration, registry: registry,
                                            context: ProviderContext(environment: ["LINK_SECRET": "0123456789abcdef0123"], stateDirectory: state))
        return try await resolver.provider(named: "cloud")
    }

    @Test("a link is a read-only public link share of the item's path in the user's files, with its expiry date")
    func create() async throws {
        let server = try OCSShareServer(files: ["/Docs/report 1.pdf", "/Docs"])
        defer { server.stop() }
        let provider = try await Self.provider(url: server.webDAVURL(root: "/Docs/"), vendor: "nextcloud")
        let sharing = try #require(provider as? any FileProviderSharing)
        #expect(provider is WebDAVProviderWithShares)
        let url = try await sharing.publicLink(to: "/report 1.pdf", expiresAfter: .seconds(3 * 86_400))
        let share = try #require(server.shares.first)
        #expect(url.absoluteString == "http://127.0.0.1:\(server.port)/s/\(share.token)")
        #expect(share.path == "/Docs/report 1.pdf" && share.shareType == 3 && share.permissions == 1)
        let expected = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date().addingTimeInterval(3 * 86_400))
        #expect(share.expireDate == String(format: "%04d-%02d-%02d", expected.year!, expected.month!, expected.day!))
        let post = try #require(server.requests.first { $0.method == "POST" })
        #expect(post.headers["ocs-apirequest"] == "true")
        #expect(post.target.hasPrefix("/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json"))
        // The remote's root itself.
        _ = try await sharing.publicLink(to: "/", expiresAfter: nil)
        #expect(server.shares.last?.path == "/Docs" && server.shares.last?.expireDate == nil)
    }

    @Test("revoking deletes the item's public link shares and leaves other shares alone")
    func revoke() async throws {
        let server = try OCSShareServer(files: ["/report.pdf", "/other.pdf"], shares: [
            .init(id: 1, path: "/report.pdf", shareType: 0, permissions: 19, expireDate: nil, token: ""),   // a user share
            .init(id: 2, path: "/report.pdf", shareType: 3, permissions: 1, expireDate: nil, token: "a"),
            .init(id: 3, path: "/other.pdf", shareType: 3, permissions: 1, expireDate: nil, token: "b"),
        ])
        defer { server.stop() }
        let sharing = try #require(try await Self.provider(url: server.webDAVURL(), vendor: "owncloud") as? any FileProviderSharing)
        _ = try await sharing.publicLink(to: "/report.pdf", expiresAfter: nil)
        try await sharing.revokePublicLinks(to: "/report.pdf")
        #expect(server.shares.map(\.id) == [1, 3])
        try await sharing.revokePublicLinks(to: "/report.pdf")   // nothing left to revoke: no error
        #expect(server.shares.map(\.id) == [1, 3])
    }

    @Test("a missing item is not found; a refused login is an HTTP error; nothing is invented")
    func failures() async throws {
        let server = try OCSShareServer(files: ["/a.txt"])
        defer { server.stop() }
        let sharing = try #require(try await Self.provider(url: server.webDAVURL(), vendor: "nextcloud") as? any FileProviderSharing)
        await expectFailure(.notFound) { _ = try await sharing.publicLink(to: "/missing.txt", expiresAfter: nil) }
        let wrong = try #require(try await Self.provider(url: server.webDAVURL(), vendor: "nextcloud", password: "wrong") as? any FileProviderSharing)
        await expectFailure(.notAuthenticated) { _ = try await wrong.publicLink(to: "/a.txt", expiresAfter: nil) }
        #expect(server.shares.isEmpty)
    }

    @Test("which remotes share: the server's own API only at its WebDAV endpoint; elsewhere the link server, or nothing")
    func selection() async throws {
        #expect(try await Self.provider(url: "http://127.0.0.1:1/remote.php/webdav/", vendor: "nextcloud") is WebDAVProviderWithShares)
        #expect(!(try await Self.provider(url: "http://127.0.0.1:1/dav/", vendor: "nextcloud") is any FileProviderSharing),
                "a Nextcloud vendor at a URL that is not its WebDAV endpoint has no share API to use")
        #expect(try await Self.provider(url: "http://127.0.0.1:1/dav/", vendor: "nextcloud", links: true) is WebDAVProviderWithLinks)
        #expect(!(try await Self.provider(url: "http://127.0.0.1:1/dav/", vendor: "other") is any FileProviderSharing))
        #expect(try await Self.provider(url: "http://127.0.0.1:1/remote.php/dav/files/alice/", vendor: "nextcloud", links: true)
                is WebDAVProviderWithShares, "the server's own shares win over the link server")
    }
}
