import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// WebDAV change monitoring through RFC 6578 `sync-collection` on Xandikos: deltas instead of
/// listings, a token the server no longer knows, and a server whose deltas leave folders out.
@Suite("WebDAV sync-collection monitoring (Xandikos)", .serialized)
struct SyncCollectionTests {
    struct Setup {
        let provider: WebDAVProvider
        let base: String
        let outside: OutsideClient
        let state: TemporaryFolder
        let logPath: String
    }

    static func setUp(syncCollection: WebDAVProvider.SyncCollection = .auto) async throws -> Setup {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_XANDIKOS_URL")
        let state = try TemporaryFolder.make(prefix: "gateway-state")
        let provider = WebDAVProvider(configuration: server.configuration(remoteName: "xandikos"), syncCollection: syncCollection,
                                      stateDirectory: URL(fileURLWithPath: state.path))
        let base = "/s-\(UUID().uuidString.prefix(8))"
        try await provider.createFolder(path: base, withIntermediateDirectories: false)
        guard let log = ProcessInfo.processInfo.environment["GATEWAY_TEST_XANDIKOS_LOG"] else {
            throw TestServers.Missing(variable: "GATEWAY_TEST_XANDIKOS_LOG")
        }
        return Setup(provider: provider, base: base, outside: .webdav(base: server.url, user: server.user, password: server.password),
                     state: state, logPath: log)
    }

    /// The server's access-log lines once every request sent so far is there (a marker request,
    /// see ``settledLog(_:server:send:)``).
    static func settledLog(_ setup: Setup) async throws -> [Substring] {
        try await GatewayTestSupport.settledLog(setup.logPath, server: "Xandikos") { marker in
            _ = try? await setup.provider.itemIfPresent(path: "/" + marker)
        }
    }

    /// The server's access-log lines for `method` on the folder itself, from line `after` on.
    static func requests(_ setup: Setup, _ method: String, after: Int) async throws -> [Substring] {
        try await settledLog(setup).dropFirst(after).filter { $0.contains("\"\(method) ") && $0.contains(setup.base + "/ ") }
    }

    /// Lines in the log, every request sent so far included.
    static func logLength(_ setup: Setup) async throws -> Int {
        try await settledLog(setup).count
    }

    @Test("sync_collection always: a flat folder is read through deltas, one REPORT per round, no listing, every change seen")
    func deltas() async throws {
        let s = try await Self.setUp(syncCollection: .always)
        defer { s.state.remove() }
        for name in ["a.txt", "b.txt", "c.txt"] { try s.outside.write(s.base + "/" + name, Data("content of \(name)".utf8)) }
        let anchor = try await s.provider.currentAnchor(at: s.base, recursive: false)
        let mark = try await Self.logLength(s)
        try s.outside.write(s.base + "/d.txt", Data("new".utf8))
        try s.outside.write(s.base + "/a.txt", Data("content of a.txt, changed".utf8))
        try s.outside.remove(s.base + "/b.txt", false)
        try s.outside.rename(s.base + "/c.txt", s.base + "/c2.txt")
        let caught = try await MonitorChecks.catchUp(s.provider, since: anchor, base: s.base)
        #expect(Set(caught.changes) == [SeenChange(.created, "d.txt"), SeenChange(.modified, "a.txt"), SeenChange(.removed, "b.txt"),
                                        SeenChange(.renamed, "c2.txt", from: "c.txt")], "\(caught.changes)")
        #expect(try await Self.requests(s, "REPORT", after: mark).count == 1, "one sync-collection report for the round")
        let listings = try await Self.requests(s, "PROPFIND", after: mark)
        #expect(listings.isEmpty, "no listing of the folder: \(listings)")
        // Quiet round: still one small report, nothing new.
        let again = try await MonitorChecks.catchUp(s.provider, since: caught.anchor, base: s.base)
        #expect(again.changes.isEmpty, "\(again.changes)")
        try? await s.provider.removeItem(path: s.base, recursive: true)
    }

    @Test("a token the server no longer knows: the folder is read in full again, nothing lost or repeated")
    func forgottenToken() async throws {
        let s = try await Self.setUp(syncCollection: .always)
        defer { s.state.remove() }
        try s.outside.write(s.base + "/a.txt", Data("a".utf8))
        let anchor = try await s.provider.currentAnchor(at: s.base, recursive: false)
        // Make the saved token one the server never issued.
        let stores = try FileManager.default.contentsOfDirectory(atPath: s.state.path + "/monitor").filter { $0.hasSuffix(".sqlite") }
        #expect(stores.count == 1)
        let sqlite = try ChildProcess.run("/usr/bin/sqlite3", [s.state.path + "/monitor/" + stores[0],
                                                               "UPDATE sync_tokens SET token = 'forgotten-token'; SELECT changes();"],
                                          environment: ProcessInfo.processInfo.environment)
        #expect(sqlite.status == 0, "\(String(decoding: sqlite.stderr, as: UTF8.self))")
        #expect(String(decoding: sqlite.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        try s.outside.write(s.base + "/b.txt", Data("b".utf8))
        let mark = try await Self.logLength(s)
        let caught = try await MonitorChecks.catchUp(s.provider, since: anchor, base: s.base)
        #expect(caught.changes == [SeenChange(.created, "b.txt")])
        // The refused token, then a report without one.
        #expect(try await Self.requests(s, "REPORT", after: mark).count == 2)
        try? await s.provider.removeItem(path: s.base, recursive: true)
    }

    @Test("sync_collection auto: deltas that leave member folders out (Xandikos) are noticed, and folders are listed instead")
    func foldersLeftOut() async throws {
        let s = try await Self.setUp()
        defer { s.state.remove() }
        try s.outside.makeFolder(s.base + "/sub")
        try s.outside.write(s.base + "/sub/x.txt", Data("x".utf8))
        let anchor = try await s.provider.currentAnchor(at: s.base, recursive: true)
        let mark = try await Self.logLength(s)
        try s.outside.makeFolder(s.base + "/sub2")
        try s.outside.write(s.base + "/sub/y.txt", Data("y".utf8))
        let caught = try await MonitorChecks.catchUp(s.provider, since: anchor, base: s.base)
        #expect(Set(caught.changes) == [SeenChange(.created, "sub2"), SeenChange(.created, "sub/y.txt")], "\(caught.changes)")
        #expect(try await !Self.requests(s, "PROPFIND", after: mark).isEmpty, "the folder is listed")
        #expect(try await Self.requests(s, "REPORT", after: mark).isEmpty, "no delta is asked once deltas are known to leave folders out")
        try? await s.provider.removeItem(path: s.base, recursive: true)
    }
}
