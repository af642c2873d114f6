import Crypto
import Foundation
import GatewayCore
@testable import GatewayState
import Testing

/// Public-link tokens (remote, path and times, encrypted with ChaChaPoly and signed with
/// HMAC-SHA256) and their revocations.
@Suite("public links: tokens and revocations")
struct LinkTokenTests {
    let secret = Array("a secret of some length, 0123456789".utf8)
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test("a token carries remote, path and times, and verifies with its secret only")
    func roundTrip() throws {
        for path in ["/", "/report.pdf", "/a b/ü/日本.txt", "/x\ny", "/" + String(repeating: "d/", count: 500) + "f"] {
            let token = LinkToken(remote: "docs", path: path, issuedMilliseconds: 1_795_000_000_000, expiresMilliseconds: 1_795_000_060_000)
            let text = try token.encoded(secret: secret)
            #expect(text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }, "one URL path segment")
            #expect(LinkToken.verify(text, secret: secret, now: now) == .success(token))
            #expect(LinkToken.verify(text, secret: Array("another secret of some length".utf8), now: now) == .failure(.badSignature))
        }
        let forever = LinkToken(remote: "r", path: "/f", issuedMilliseconds: 5, expiresMilliseconds: nil)
        #expect(LinkToken.verify(try forever.encoded(secret: secret), secret: secret, now: .distantFuture) == .success(forever))
    }

    @Test("a token hides the remote, the path and the times; each one made is different")
    func hidden() throws {
        let token = LinkToken(remote: "clients", path: "/Acme Corp/contracts/2026/secret-plan.pdf",
                              issuedMilliseconds: 1_795_000_000_000, expiresMilliseconds: 1_795_000_060_000)
        let first = try token.encoded(secret: secret), second = try token.encoded(secret: secret)
        #expect(first != second, "a random nonce each time")
        for text in [first, second] {
            #expect(LinkToken.verify(text, secret: secret, now: now) == .success(token))
            var base64 = String(text.prefix { $0 != "." }).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            let payload = try #require(Data(base64Encoded: base64))
            for clear in ["clients", "Acme", "contracts", "secret-plan"] {
                #expect(payload.range(of: Data(clear.utf8)) == nil, "\(clear) readable in the token")
            }
            let issued = Data((0..<8).map { UInt8(truncatingIfNeeded: token.issuedMilliseconds >> (56 - 8 * $0)) })
            #expect(payload.range(of: issued) == nil, "the issue time readable in the token")
        }
    }

    @Test("version 1 tokens (fields in clear, made before encryption) still verify")
    func clearVersion() throws {
        func encode(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let fields = (0..<8).map { UInt8(truncatingIfNeeded: UInt64(7) >> (56 - 8 * $0)) } + [UInt8](repeating: 0, count: 8)
            + [4] + Array("docs".utf8) + Array("/old.pdf".utf8)
        let payload = [UInt8(1)] + fields
        let mac = HMAC<SHA256>.authenticationCode(for: Array("gateway public link\u{0}".utf8) + payload, using: SymmetricKey(data: secret))
        let text = encode(payload) + "." + encode(Array(mac))
        #expect(LinkToken.verify(text, secret: secret, now: now)
            == .success(LinkToken(remote: "docs", path: "/old.pdf", issuedMilliseconds: 7, expiresMilliseconds: nil)))
        // An unknown version, even signed, is refused.
        let future = [UInt8(9)] + fields
        let futureMAC = HMAC<SHA256>.authenticationCode(for: Array("gateway public link\u{0}".utf8) + future, using: SymmetricKey(data: secret))
        #expect(LinkToken.verify(encode(future) + "." + encode(Array(futureMAC)), secret: secret, now: now) == .failure(.badSignature))
    }

    @Test("any change to a token makes it invalid")
    func tamper() throws {
        let text = try LinkToken(remote: "docs", path: "/report.pdf", issuedMilliseconds: 1, expiresMilliseconds: nil).encoded(secret: secret)
        let characters = Array(text)
        let dot = characters.firstIndex(of: ".")!
        // The last character of each part may carry base64 padding bits a decoder ignores.
        for index in characters.indices where index != dot && index != dot - 1 && index != characters.count - 1 {
            var changed = characters
            changed[index] = characters[index] == "A" ? "B" : "A"
            #expect(LinkToken.verify(String(changed), secret: secret, now: now) == .failure(.badSignature), "changed at \(index)")
        }
        for bad in ["", ".", "abc", "abc.", ".abc", "a.b.c", "%%%.%%%", String(repeating: "A", count: 5000), text + "x", "x" + text] {
            #expect(LinkToken.verify(bad, secret: secret, now: now) == .failure(.badSignature), "\(bad.prefix(40))")
        }
    }

    @Test("expiry: valid until the millisecond it names, 410 from then on")
    func expiry() throws {
        let token = LinkToken(remote: "docs", path: "/f", issuedMilliseconds: 1_795_000_000_000, expiresMilliseconds: 1_795_000_001_000)
        let text = try token.encoded(secret: secret)
        #expect(LinkToken.verify(text, secret: secret, now: Date(timeIntervalSince1970: 1_795_000_000.999)) == .success(token))
        #expect(LinkToken.verify(text, secret: secret, now: Date(timeIntervalSince1970: 1_795_000_001)) == .failure(.expired))
        #expect(LinkToken.milliseconds(Date(timeIntervalSince1970: -5)) == 0)
        #expect(LinkToken.milliseconds(.distantFuture) > 0)
    }

    @Test("PublicLinks: URL under the base, expiry saturates, secret checked")
    func issuer() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("links-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let configuration = LinksConfiguration(baseURL: URL(string: "https://files.example.com/pub")!, secretEnvironmentVariable: "S")
        let links = PublicLinks(configuration: configuration, remote: "docs", stateDirectory: state, environment: ["S": String(decoding: secret, as: UTF8.self)])
        let url = try links.link(to: "/a b/r.pdf", name: "r.pdf", isFolder: false, expiresAfter: .seconds(60), now: now)
        #expect(url.absoluteString.hasPrefix("https://files.example.com/pub/s/"))
        #expect(url.absoluteString.hasSuffix("/r.pdf"))
        let token = url.pathComponents[3]
        guard case .success(let parsed) = LinkToken.verify(token, secret: secret, now: now) else { Issue.record("does not verify"); return }
        #expect(parsed.path == "/a b/r.pdf" && parsed.remote == "docs" && parsed.expiresMilliseconds == LinkToken.milliseconds(now) + 60_000)
        let folder = try links.link(to: "/", name: "", isFolder: true, expiresAfter: .seconds(Int64.max), now: now)
        #expect(folder.absoluteString.hasSuffix("/"))
        guard case .success(let far) = LinkToken.verify(folder.pathComponents[3], secret: secret, now: now) else { Issue.record("no"); return }
        #expect(far.expiresMilliseconds == UInt64.max, "an expiry past what fits saturates")
        #expect(throws: FileProviderError.self) { try links.link(to: "/f", name: "f", isFolder: false, expiresAfter: .zero) }
        let short = PublicLinks(configuration: configuration, remote: "docs", stateDirectory: state, environment: ["S": "short"])
        #expect(throws: ConfigError.self) { try short.link(to: "/f", name: "f", isFolder: false, expiresAfter: nil) }
        let unset = PublicLinks(configuration: configuration, remote: "docs", stateDirectory: state, environment: [:])
        #expect(throws: ConfigError.self) { try unset.link(to: "/f", name: "f", isFolder: false, expiresAfter: nil) }
    }

    @Test("revocation: links made before it are refused, later ones work")
    func revocation() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("links-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let store = try LinkRevocations.open(directory: state)
        let before = LinkToken(remote: "docs", path: "/f", issuedMilliseconds: LinkToken.milliseconds(now) - 1, expiresMilliseconds: nil)
        #expect(try !store.isRevoked(before))
        try store.revoke(remote: "docs", path: "/f", now: now)
        #expect(try store.isRevoked(before))
        var same = before
        same.issuedMilliseconds = LinkToken.milliseconds(now)
        #expect(try store.isRevoked(same), "made in the same millisecond as the revocation")
        var after = before
        after.issuedMilliseconds = LinkToken.milliseconds(now) + 1
        #expect(try !store.isRevoked(after))
        var other = before
        other.remote = "other"
        #expect(try !store.isRevoked(other), "per remote")
        // An older revocation never undoes a newer one.
        try store.revoke(remote: "docs", path: "/f", now: now.addingTimeInterval(-100))
        #expect(try store.isRevoked(same))
        #expect(try LinkRevocations.open(directory: state).isRevoked(before), "kept on disk")
    }
}
