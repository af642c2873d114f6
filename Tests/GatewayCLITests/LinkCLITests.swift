import Foundation
@testable import GatewayTestSupport
import Testing

/// Public links end to end: `gateway link` makes them, `gateway serve links` (the built binary,
/// started as a user starts it) answers them, curl fetches them without any credential.
@Suite("gateway link and serve links")
struct LinkCLITests {
    static let secret = "link-secret-\(UUID().uuidString)"

    /// A running link server and its URL.
    struct Served {
        let running: GatewayRunner.Running
        let url: String
        let log: String
        func stop() { running.kill() }
    }

    /// What curl got.
    struct Fetched {
        let status: Int
        let body: Data
        let headers: String
    }

    /// Fetches `url` with curl, no credentials, paths as given.
    static func fetch(_ url: String, _ extra: [String] = []) throws -> Fetched {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let status = try MediaFiles.run("/usr/bin/curl", ["-s", "--path-as-is", "-o", folder.appendingPathComponent("body").path,
                                                          "-D", folder.appendingPathComponent("head").path, "-w", "%{http_code}"] + extra + [url])
        let body = (try? Data(contentsOf: folder.appendingPathComponent("body"))) ?? Data()
        let headers = (try? String(contentsOf: folder.appendingPathComponent("head"), encoding: .utf8)) ?? ""
        return Fetched(status: Int(status) ?? -1, body: body, headers: headers)
    }

    /// Writes a config with `remotes` (JSON members) and a `links` object whose base URL is
    /// `base` (filled in once the server's port is known), and starts `gateway serve links`.
    static func serve(_ s: CLIScratch, remotes: String, basePath: String = "", environment: [String: String] = [:]) async throws
        -> (Served, [String: String]) {
        let env = environment.merging(["GATEWAY_CONFIG": s.path("config.json"), "LINK_SECRET": secret]) { $1 }
        func writeConfig(_ port: Int) throws {
            try s.write("config.json", Data("""
            {"links": {"base_url": "http://127.0.0.1:\(port)\(basePath)", "secret_env": "LINK_SECRET"}, "remotes": {\(remotes)}}
            """.utf8))
        }
        // The port must be in the config before the server starts: take a free one first.
        let port = try freePort()
        try writeConfig(port)
        let log = s.path("links-\(UUID().uuidString.prefix(6)).log")
        let running = try s.runner.start(["serve", "links", "--addr", "127.0.0.1:\(port)"], extraEnvironment: env, stderrFile: log)
        for _ in 0..<200 {
            if let text = try? String(contentsOfFile: log, encoding: .utf8), text.contains("serving public links at") {
                return (Served(running: running, url: "http://127.0.0.1:\(port)\(basePath)", log: log), env)
            }
            if !running.process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        running.kill()
        throw CLITestSetupError("gateway serve links did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    /// A TCP port nothing listens on now.
    static func freePort() throws -> Int {
        let server = try ScriptedHTTPServer { _ in .http("200 OK") }
        defer { server.stop() }
        return server.port
    }

    /// `gateway link ARGS`: the URL on its last line.
    static func link(_ s: CLIScratch, _ arguments: [String], env: [String: String]) async throws -> String {
        let result = try await s.runner.run(["link"] + arguments, extraEnvironment: env)
        try #require(result.status == 0, "gateway link \(arguments): \(result.stderr)")
        return try #require(result.text.split(separator: "\n").last.map(String.init))
    }

    @Test("a file's link serves its bytes, ranges and HEAD without credentials; tampering, expiry and revocation are refused",
          .timeLimit(.minutes(1)))
    func fileLink() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let content = Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try s.write("files/reports/2026 é.pdf", content)
        let (served, env) = try await Self.serve(s, remotes: #""docs": {"type": "local", "root": "\#(s.path("files"))"}"#, basePath: "/pub")
        defer { served.stop() }
        let url = try await Self.link(s, ["docs:reports/2026 é.pdf"], env: env)
        #expect(url.hasPrefix(served.url + "/s/") && url.hasSuffix("/2026%20%C3%A9.pdf"), "\(url)")
        let whole = try Self.fetch(url)
        #expect(whole.status == 200 && whole.body == content)
        #expect(whole.headers.lowercased().contains("content-security-policy: sandbox"))
        let range = try Self.fetch(url, ["-r", "1000-1999"])
        #expect(range.status == 206 && range.body == content.subdata(in: 1000..<2000))
        let head = try Self.fetch(url, ["-I"])
        #expect(head.status == 200 && head.headers.contains("Content-Length: 1000000") && head.body.count < 2000, "HEAD sends no body")
        let token = try #require(url.split(separator: "/").dropLast().last.map(String.init))
        #expect(try Self.fetch(url.replacingOccurrences(of: token, with: "X" + token.dropFirst())).status == 403, "tampered")
        #expect(try Self.fetch(served.url + "/s/not-a-token/2026.pdf").status == 403)
        #expect(try Self.fetch(url + "/more").status == 404, "nothing below a file")
        #expect(try Self.fetch(url.replacingOccurrences(of: "2026%20%C3%A9.pdf", with: "other.pdf")).status == 404, "another name")
        #expect(try Self.fetch(url, ["-X", "PUT", "-d", "x"]).status == 405)

        // An expiry in the future works (an hour: no machine is that slow); a past one is 410.
        let lasting = try await Self.link(s, ["--expire", "1h", "docs:reports/2026 é.pdf"], env: env)
        #expect(try Self.fetch(lasting).status == 200, "a link before its expiry")
        // The 2 s count from inside the command: waited for after it returned, then polled (a
        // link that never expires fails after 30 s).
        let brief = try await Self.link(s, ["--expire", "2s", "docs:reports/2026 é.pdf"], env: env)
        try await Task.sleep(for: .seconds(2))
        try await waitUntil("the 2 s link expired (410)") { try Self.fetch(brief).status == 410 }

        let revoked = try await s.runner.run(["link", "--revoke", "docs:reports/2026 é.pdf"], extraEnvironment: env)
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(try Self.fetch(url).status == 404, "revoked: like a missing item")
        let fresh = try await Self.link(s, ["docs:reports/2026 é.pdf"], env: env)
        #expect(try Self.fetch(fresh).body == content, "a link made after the revocation works")

        // A link to an item that goes away answers the same 404 as a revoked one.
        try s.write("files/gone.txt", Data("x".utf8))
        let gone = try await Self.link(s, ["docs:gone.txt"], env: env)
        try FileManager.default.removeItem(atPath: s.path("files/gone.txt"))
        #expect(try Self.fetch(gone).status == 404)
        // The token is shortened in the access log.
        let log = try String(contentsOfFile: served.log, encoding: .utf8)
        #expect(!log.contains(token) && log.contains("GET /pub/s/\(token.prefix(8))"), "\(log)")
    }

    @Test("a folder's link lists it and serves what is below, nothing above; escapes are refused", .timeLimit(.minutes(1)))
    func folderLink() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("files/secret.txt", Data("outside".utf8))
        try s.write("files/shared/a <b>.txt", Data("A".utf8))
        try s.write("files/shared/sub/c.txt", Data("C".utf8))
        let (served, env) = try await Self.serve(s, remotes: #""docs": {"type": "local", "root": "\#(s.path("files"))"}"#)
        defer { served.stop() }
        let result = try await s.runner.run(["link", "--json", "--expire", "2h", "docs:shared"], extraEnvironment: env)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.text.utf8)) as? [String: Any])
        let url = try #require(object["url"] as? String)
        #expect(object["location"] as? String == "docs:shared" && (object["expires"] as? String)?.isEmpty == false)
        #expect(url.hasSuffix("/shared/"))
        let index = try Self.fetch(url)
        let html = String(decoding: index.body, as: UTF8.self)
        #expect(index.status == 200 && html.contains("a &lt;b&gt;.txt") && html.contains("sub/") && !html.contains("secret"))
        #expect(try Self.fetch(url + "a%20%3Cb%3E.txt").body == Data("A".utf8))
        #expect(try Self.fetch(url + "sub/c.txt").body == Data("C".utf8))
        for escape in ["../secret.txt", "%2e%2e/secret.txt", "sub/../../secret.txt", "..%2fsecret.txt", "%2E%2E%2Fsecret.txt", "sub/%00"] {
            let fetched = try Self.fetch(url + escape)
            #expect(fetched.status == 404 && fetched.body != Data("outside".utf8), "\(escape)")
        }
        // The token alone leads to the link's full form.
        let token = url.split(separator: "/").dropLast().last.map(String.init) ?? ""
        let bare = try Self.fetch(served.url + "/s/" + token)
        #expect(bare.status == 301 && bare.headers.contains("/s/\(token)/shared/"))
    }

    @Test("serve webdav --links: one listener answers links without credentials and WebDAV behind its login", .timeLimit(.minutes(1)))
    func webDAVServerWithLinks() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let content = Data("shared through the WebDAV server's own listener\n".utf8)
        try s.write("files/reports/q3.txt", content)
        let port = try Self.freePort()
        try s.write("config.json", Data("""
        {"links": {"base_url": "http://127.0.0.1:\(port)", "secret_env": "LINK_SECRET"},
         "remotes": {"docs": {"type": "local", "root": "\(s.path("files"))"}}}
        """.utf8))
        let env = ["GATEWAY_CONFIG": s.path("config.json"), "LINK_SECRET": Self.secret, "DAV_PASS": "dav-pass"]
        let log = s.path("serve.log")
        let running = try s.runner.start(["serve", "webdav", "--links", "--user", "alice", "--password-env", "DAV_PASS",
                                          "--addr", "127.0.0.1:\(port)", "--baseurl", "/dav", "docs:"], extraEnvironment: env, stderrFile: log)
        defer { running.kill() }
        var started = false
        for _ in 0..<200 where !started {
            started = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("serving public links at")
            if !started { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(started, "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")

        let url = try await Self.link(s, ["docs:reports/q3.txt"], env: env)
        #expect(url.hasPrefix("http://127.0.0.1:\(port)/s/"), "\(url)")
        let fetched = try Self.fetch(url)
        #expect(fetched.status == 200 && fetched.body == content, "a link needs no login")
        #expect(try Self.fetch(url.replacingOccurrences(of: "/s/", with: "/s/x")).status == 403, "a tampered token")
        let dav = "http://127.0.0.1:\(port)/dav/reports/q3.txt"
        #expect(try Self.fetch(dav).status == 401, "WebDAV keeps its login")
        let logged = try Self.fetch(dav, ["-u", "alice:dav-pass"])
        #expect(logged.status == 200 && logged.body == content)
        // Without a links object the flag is refused at start, saying what to add.
        try s.write("config.json", Data(#"{"remotes": {"docs": {"type": "local", "root": "\#(s.path("files"))"}}}"#.utf8))
        let refused = try await s.runner.run(["serve", "webdav", "--links", "--no-auth", "--addr", "127.0.0.1:0", "docs:"], extraEnvironment: env)
        #expect(refused.status == 2 && refused.stderr.contains("links"), "\(refused.stderr)")
    }

    @Test("links to WebDAV (Apache) and FTP (vsftpd) remotes are served with the config's credentials", .timeLimit(.minutes(1)))
    func remoteBackends() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = ProcessInfo.processInfo.environment
        guard let davURL = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"], let ftpURL = environment["GATEWAY_TEST_FTP_VSFTPD_URL"],
              let ftpUser = environment["GATEWAY_TEST_FTP_VSFTPD_USER"] else {
            throw CLITestSetupError("test servers not started: run ./scripts/test.sh (GATEWAY_TEST_WEBDAV_APACHE_URL, GATEWAY_TEST_FTP_VSFTPD_URL)")
        }
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let remotes = #""dav": {"type": "webdav", "url": "\#(davURL)", "user": "\#(server.user)", "password_env": "DAV_SECRET"}, "#
            + #""ftp": {"type": "ftp", "url": "\#(ftpURL)", "user": "\#(ftpUser)", "password_env": "FTP_SECRET"}"#
        let secrets = ["DAV_SECRET": server.password, "FTP_SECRET": environment["GATEWAY_TEST_FTP_PASSWORD"] ?? "gateway-test"]
        let (served, env) = try await Self.serve(s, remotes: remotes, environment: secrets)
        defer { served.stop() }
        let content = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try s.write("payload.bin", content)
        let folder = "links-\(UUID().uuidString.prefix(8))"
        for remote in ["dav", "ftp"] {
            #expect(try await s.runner.run(["copy", "payload.bin", "\(remote):\(folder)/payload.bin"], extraEnvironment: env).status == 0)
            let url = try await Self.link(s, ["\(remote):\(folder)/payload.bin"], env: env)
            let fetched = try Self.fetch(url)
            #expect(fetched.status == 200 && fetched.body == content, "\(remote): \(fetched.status)")
            #expect(try Self.fetch(url, ["-r", "-100"]).body == content.suffix(100), "\(remote): suffix range")
            _ = try? await s.runner.run(["rm", "-r", "--no-trash", "\(remote):\(folder)"], extraEnvironment: env)
        }
    }

    @Test("without a links object: a clear message and exit 2; a bare path cannot be shared")
    func notConfigured() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("files/a.txt", Data("a".utf8))
        try s.write("config.json", Data(#"{"remotes": {"docs": {"type": "local", "root": "\#(s.path("files"))"}}}"#.utf8))
        let env = ["GATEWAY_CONFIG": s.path("config.json")]
        let result = try await s.runner.run(["link", "docs:a.txt"], extraEnvironment: env)
        #expect(result.status == 2 && result.stderr.contains("\"links\""), "\(result.stderr)")
        let server = try await s.runner.run(["serve", "links", "--addr", "127.0.0.1:0"], extraEnvironment: env)
        #expect(server.status == 2 && server.stderr.contains("links"), "\(server.stderr)")
        try s.write("config.json", Data(#"{"links": {"base_url": "http://127.0.0.1:1", "secret_env": "UNSET_SECRET"}, "remotes": {"docs": {"type": "local", "root": "\#(s.path("files"))"}}}"#.utf8))
        let unset = try await s.runner.run(["link", "docs:a.txt"], extraEnvironment: env)
        #expect(unset.status == 2 && unset.stderr.contains("UNSET_SECRET"), "\(unset.stderr)")
        let bare = try await s.runner.run(["link", s.path("files/a.txt")], extraEnvironment: env)
        #expect(bare.status == 2 && bare.stderr.contains("named remote"), "\(bare.stderr)")
        let missing = try await s.runner.run(["link", "docs:missing.txt"], extraEnvironment: env.merging(["UNSET_SECRET": Self.secret]) { $1 })
        #expect(missing.status == 1, "\(missing.stderr)")
    }
}
