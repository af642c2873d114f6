import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// `FileProviderSharing` on every backend: offered exactly when the configuration has `links`
/// (the backend's `…WithLinks` variant), and then a link names the item, its expiry and nothing
/// else, fails for a missing item, and a revocation reaches the state store the link server
/// reads. (The link server itself answering these links is checked end to end in
/// `LinkCLITests`, through `gateway serve links`.)
@Suite("Sharing: public links")
struct SharingBehaviourTests {
    static let secret = "behaviour-secret-0123456789abcdef"

    static func links(_ state: URL) -> PublicLinks {
        PublicLinks(configuration: LinksConfiguration(baseURL: URL(string: "https://links.example.com/base")!, secretEnvironmentVariable: "SECRET"),
                    remote: "behaviour", stateDirectory: state, environment: ["SECRET": secret])
    }

    @Test("no links configured: as? FileProviderSharing fails", arguments: ProviderFixture.all)
    func absentWithoutLinks(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            if fixture.sharesWithoutLinks {
                // Its own links (S3's presigned URLs: S3PresignedLinkTests downloads and expires them).
                #expect(s.provider is any FileProviderSharing, "\(type(of: s.provider)) does not share")
                return
            }
            #expect(!(s.provider is any FileProviderSharing), "\(type(of: s.provider)) claims sharing without a links configuration")
        }
    }

    @Test("links configured: a link signs the item's path and expiry; missing items fail; revocations are kept", arguments: ProviderFixture.all)
    func linkNamesTheItem(fixture: ProviderFixture) async throws {
        let state = try TemporaryFolder.make()
        defer { state.remove() }
        let stateURL = URL(fileURLWithPath: state.path)
        try await fixture.run(links: Self.links(stateURL)) { s in
            let sharing = try #require(s.provider as? any FileProviderSharing, "\(type(of: s.provider)) does not offer sharing with links")
            try await s.provider.writeContents(path: s.path("r é.pdf"), data: Data("shared".utf8))
            try await s.provider.createFolder(path: s.path("folder"), withIntermediateDirectories: false)
            let before = Date()
            let url = try await sharing.publicLink(to: s.path("r é.pdf"), expiresAfter: .seconds(3600))
            #expect(url.absoluteString.hasPrefix("https://links.example.com/base/s/"))
            #expect(url.absoluteString.hasSuffix("/r%20%C3%A9.pdf"), "\(url)")
            let token = try #require(url.pathComponents.dropFirst(3).first)
            guard case .success(let signed) = LinkToken.verify(token, secret: Array(Self.secret.utf8)) else {
                Issue.record("the link's token does not verify")
                return
            }
            #expect(signed.remote == "behaviour")
            #expect(signed.path == s.path("r é.pdf"))
            let expires = try #require(signed.expiresMilliseconds)
            #expect(expires >= LinkToken.milliseconds(before) + 3_600_000 && expires <= LinkToken.milliseconds(Date()) + 3_600_000)
            let folderURL = try await sharing.publicLink(to: s.path("folder"), expiresAfter: nil)
            #expect(folderURL.absoluteString.hasSuffix("/folder/"), "a folder's link ends with a slash")
            await expectFailure(.notFound) { _ = try await sharing.publicLink(to: s.path("missing"), expiresAfter: nil) }

            try await sharing.revokePublicLinks(to: s.path("r é.pdf"))
            let revocations = try LinkRevocations.open(directory: stateURL)
            #expect(try revocations.isRevoked(signed))
            let again = try await sharing.publicLink(to: s.path("r é.pdf"), expiresAfter: nil)
            guard case .success(let newer) = LinkToken.verify(again.pathComponents[3], secret: Array(Self.secret.utf8)) else {
                Issue.record("the new link does not verify")
                return
            }
            #expect(try !revocations.isRevoked(newer), "a link made after the revocation works")
        }
    }
}
