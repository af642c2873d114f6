import Foundation
@testable import GatewayServe
@testable import GatewayServeRequests
import Testing

/// The `If` header, `LOCK` bodies and `Timeout` (RFC 4918 sections 10.4, 9.10, 10.7), and the
/// lock table's conflict rules (section 6). litmus's `locks` suite checks them end to end; these
/// pin the corner cases it does not reach.
@Suite("WebDAV locks: grammar and table")
struct LockGrammarTests {
    @Test("If: tagged and untagged lists, Not, entity tags")
    func ifHeaderParses() throws {
        let header = try #require(IfHeader.parse(#"<http://h/doc> (<urn:uuid:a> ["e1"]) (Not <DAV:no-lock> [W/"e2"])"#))
        #expect(header.lists.count == 2)
        #expect(header.lists[0] == IfHeader.List(resource: "http://h/doc", conditions: [
            .init(negated: false, subject: .token("urn:uuid:a")), .init(negated: false, subject: .entityTag("\"e1\"")),
        ]))
        #expect(header.lists[1].resource == "http://h/doc")
        #expect(header.lists[1].conditions[0] == .init(negated: true, subject: .token("DAV:no-lock")))
        #expect(header.submittedTokens == ["urn:uuid:a"])
        let untagged = try #require(IfHeader.parse("(<urn:uuid:b>)\t(NOT <urn:uuid:c>)"))
        #expect(untagged.lists.map(\.resource) == [nil, nil])
        #expect(untagged.submittedTokens == ["urn:uuid:b"])
    }

    @Test("If: malformed headers are refused, not guessed at", arguments: [
        "", "   ", "<http://h/doc>", "()", "(<urn:uuid:a>", "(urn:uuid:a)", "(<>)", "(Not)", "(<a>) <http://h/>",
        "(<a>) <http://h/> (<b>)", "([\"e\"", "(<a<b>)", String(repeating: "(<a>)", count: 300),
    ])
    func ifHeaderMalformed(_ text: String) {
        #expect(IfHeader.parse(text) == nil)
    }

    @Test("If: a list holds when every condition does; the header when any list does")
    func ifHeaderEvaluates() async throws {
        func evaluate(_ text: String, locked: Set<String> = ["urn:uuid:a"], etag: String? = "\"e1\"") async throws -> Bool {
            let header = try #require(IfHeader.parse(text))
            return await header.evaluate(resolve: { tag in tag == nil || tag == "/doc" ? "/doc" : nil },
                                         entityTag: { _ in etag },
                                         holdsToken: { token, path in path == "/doc" && locked.contains(token) })
        }
        #expect(try await evaluate("(<urn:uuid:a>)"))
        #expect(try await !evaluate("(<urn:uuid:x>)"))
        #expect(try await evaluate("(<urn:uuid:x>) (Not <DAV:no-lock>)"))
        #expect(try await evaluate(#"(<urn:uuid:a> ["e1"])"#))
        #expect(try await !evaluate(#"(<urn:uuid:a> ["other"])"#))
        #expect(try await evaluate(#"(<urn:uuid:a> [W/"e1"])"#), "entity tags compare weakly in If")
        #expect(try await !evaluate(#"(["e1"])"#, etag: nil), "a folder has no entity tag")
        #expect(try await evaluate("</doc> (<urn:uuid:a>)"))
        #expect(try await !evaluate("<http://elsewhere/doc> (<urn:uuid:a>)"), "a resource not on this server")
        #expect(try await !evaluate("(Not <urn:uuid:a>)"))
    }

    @Test("LOCK bodies: scope, type, owner kept as self-contained XML")
    func lockBodies() throws {
        let body = #"""
        <?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope>
        <D:locktype><D:write/></D:locktype><D:owner><D:href>mailto:a&amp;b@example.com</D:href></D:owner></D:lockinfo>
        """#
        let request = try LockRequest.parse(Data(body.utf8))
        #expect(request.scope == .shared)
        #expect(request.owner == #"<v2:href xmlns:v2="DAV:">mailto:a&amp;b@example.com</v2:href>"#)
        let plain = try LockRequest.parse(Data(#"<lockinfo xmlns="DAV:"><lockscope><exclusive/></lockscope><locktype><write/></locktype><owner>litmus</owner></lockinfo>"#.utf8))
        #expect(plain == LockRequest(scope: .exclusive, owner: "litmus"))
        for bad in [#"<D:lockinfo xmlns:D="DAV:"><D:locktype><D:write/></D:locktype></D:lockinfo>"#,
                    #"<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope></D:lockinfo>"#,
                    #"<D:propfind xmlns:D="DAV:"/>"#, "<not xml",
                    #"<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><D:lockinfo xmlns:D="DAV:"><D:owner>&e;</D:owner></D:lockinfo>"#] {
            #expect(throws: LockRequest.ParseError.self, "\(bad)") { try LockRequest.parse(Data(bad.utf8)) }
        }
        let huge = #"<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>"#
            + String(repeating: "x", count: LockRequest.maximumOwner + 1) + "</D:owner></D:lockinfo>"
        #expect(throws: LockRequest.ParseError.self) { try LockRequest.parse(Data(huge.utf8)) }
    }

    @Test("Timeout: the first usable choice, capped; Infinite gets the cap")
    func timeouts() {
        let longest = Duration.seconds(604_800), fallback = Duration.seconds(3600)
        #expect(TimeoutHeader.parse(nil, longest: longest, fallback: fallback) == fallback)
        #expect(TimeoutHeader.parse("Second-60", longest: longest, fallback: fallback) == .seconds(60))
        #expect(TimeoutHeader.parse("Infinite, Second-4100000000", longest: longest, fallback: fallback) == longest)
        #expect(TimeoutHeader.parse("Second-99999999999999999999, Second-10", longest: longest, fallback: fallback) == .seconds(10))
        #expect(TimeoutHeader.parse("Second-18446744073709551615", longest: longest, fallback: fallback) == longest)
        #expect(TimeoutHeader.parse("Second-0, bogus", longest: longest, fallback: fallback) == fallback)
    }

    @Test("the lock table: exclusive against everything, shared with shared, depth reaches members")
    func lockTable() throws {
        let table = LockTable(capacity: 4)
        let hour = Duration.seconds(3600)
        let folder = try table.lock(root: "/a", isFolder: true, deep: true, scope: .shared, owner: "", timeout: hour).get()
        #expect(try table.lock(root: "/a/b", isFolder: false, deep: false, scope: .shared, owner: "", timeout: hour).get().root == "/a/b")
        #expect(table.lock(root: "/a/b", isFolder: false, deep: false, scope: .exclusive, owner: "", timeout: hour) == .failure(.conflict(root: "/a")))
        #expect(table.lock(root: "/", isFolder: true, deep: true, scope: .exclusive, owner: "", timeout: hour) == .failure(.conflict(root: "/a")),
                "a deep lock above a locked member conflicts")
        #expect(throws: Never.self) { try table.lock(root: "/", isFolder: true, deep: false, scope: .exclusive, owner: "", timeout: hour).get() }
        #expect(table.locks(covering: "/a/b/c").map(\.root) == ["/a"])
        #expect(table.locks(affecting: "/a2", members: false, parentMembership: true).map(\.root) == ["/"],
                "adding a member to a depth-0 locked folder")
        #expect(Set(table.locks(affecting: "/a", members: true, parentMembership: false).map(\.root)) == ["/a", "/a/b"])
        #expect(table.isToken(folder.token, covering: "/a/x"))
        #expect(!table.isToken(folder.token, covering: "/ab"), "a prefix of the name is not inside")
        #expect(table.lock(root: "/z", isFolder: false, deep: false, scope: .shared, owner: "", timeout: hour).map(\.root) == .success("/z"))
        #expect(table.lock(root: "/y", isFolder: false, deep: false, scope: .shared, owner: "", timeout: hour) == .failure(.full))
        #expect(!table.unlock(folder.token, covering: "/elsewhere"))
        #expect(table.unlock(folder.token, covering: "/a/b"), "UNLOCK works from any resource the lock covers")
        table.removeAll(under: "/a")
        #expect(table.locks(covering: "/a/b").isEmpty)
        #expect(table.refresh(folder.token, covering: "/a", timeout: hour) == nil)
    }

    @Test("expired locks are gone")
    func expiry() async throws {
        let table = LockTable()
        let lock = try table.lock(root: "/f", isFolder: false, deep: false, scope: .exclusive, owner: "", timeout: .milliseconds(50)).get()
        try await Task.sleep(for: .milliseconds(120))
        #expect(!table.isToken(lock.token, covering: "/f"))
        #expect(table.locks(covering: "/f").isEmpty)
        #expect(throws: Never.self) { try table.lock(root: "/f", isFolder: false, deep: false, scope: .exclusive, owner: "", timeout: .seconds(1)).get() }
    }
}
