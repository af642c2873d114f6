import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// Issue 29 part 6: `kill -9` in the middle of an upload, then the same copy again: it succeeds,
/// the file is byte-equal, and no temporary is left, on every kind of backend. The source is a
/// WebDAV stand-in that drips a 2 MiB file (written as a resumable partial file) and a 900 KiB one
/// (written to an ordinary temporary) over about 1.6 s each, so the kill lands mid-upload.
@Suite("kill -9 mid-upload, then the same copy again")
struct KillCLITests {
    static let files = ["big.bin": 2 << 20, "mid.bin": 900 << 10]
    static let chunk = 32 << 10

    /// A read-only source with one folder `dir` holding the files (all 'x'), sent slowly.
    static func source() throws -> ScriptedHTTPServer {
        try ScriptedHTTPServer { request in
            let path = request.path.hasSuffix("/") ? String(request.path.dropLast()) : request.path
            let name = String(path.dropFirst("/dir/".count))
            switch (request.method, path) {
            case ("PROPFIND", "/dir"):
                let members = request.headers["depth"] == "0" ? ""
                    : files.map { ScriptedReply.response(href: "/dir/\($0.key)", size: String($0.value)) }.joined()
                return .multistatus(ScriptedReply.response(href: "/dir/", folder: true) + members)
            case ("PROPFIND", _) where files[name] != nil:
                return .multistatus(ScriptedReply.response(href: path, size: String(files[name]!)))
            case ("GET", _) where files[name] != nil:
                return ScriptedReply([.bytes(ScriptedReply.head("200 OK", headers: [("Content-Length", String(files[name]!))])),
                                      .repeating(chunk: Array(repeating: UInt8(ascii: "x"), count: chunk), interval: 0.05,
                                                 total: files[name]!, seconds: 30)])
            case ("OPTIONS", _):
                return .http("200 OK", headers: [("DAV", "1")])
            default:
                return .http("404 Not Found")
            }
        }
    }

    struct Target: Sendable, CustomTestStringConvertible {
        let name: String
        /// The remote's JSON config (without the trash key), or nil for a local folder.
        let config: @Sendable ([String: String]) throws -> String?
        /// Whether an ordinary temporary (`.NAME.gateway-HOST-PID-RANDOM.partial`) is visible at the
        /// destination while the upload runs (a WebDAV or FTP upload of under 1 MiB is read whole
        /// first; from 1 MiB, Local and FTP write resumable partial files, which the rerun resumes).
        let showsTemporary: Bool
        var testDescription: String { name }
    }

    static func remote(type: String, urlVariable: String, userVariable: String?, passwordVariable: String) -> @Sendable ([String: String]) throws -> String? {
        { environment in
            guard let url = environment[urlVariable], let password = environment[passwordVariable] else {
                throw CLITestSetupError("\(urlVariable) not set: run ./scripts/test.sh (it starts the servers)")
            }
            let user = userVariable.flatMap { environment[$0] } ?? environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway"
            return #"{"type": "\#(type)", "url": "\#(url)", "user": "\#(user)", "password": "\#(password)""#
        }
    }

    static let targets: [Target] = [
        Target(name: "local", config: { _ in nil }, showsTemporary: true),
        // Apache keeps a PUT body in its own temporary file and removes it when the client is gone.
        Target(name: "apache", config: remote(type: "webdav", urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL", userVariable: nil,
                                              passwordVariable: "GATEWAY_TEST_WEBDAV_PASSWORD"), showsTemporary: false),
        Target(name: "vsftpd", config: remote(type: "ftp", urlVariable: "GATEWAY_TEST_FTP_VSFTPD_URL", userVariable: "GATEWAY_TEST_FTP_VSFTPD_USER",
                                              passwordVariable: "GATEWAY_TEST_FTP_PASSWORD"), showsTemporary: false),
        Target(name: "pyftpdlib", config: remote(type: "ftp", urlVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_URL",
                                                 userVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_USER", passwordVariable: "GATEWAY_TEST_FTP_PASSWORD"),
               showsTemporary: false),
        // SFTP writes the temporary from its OPEN on, so it is seen while the upload runs.
        Target(name: "openssh-sftp", config: { environment in
            guard let port = environment["GATEWAY_TEST_SFTP_OPENSSH_PORT"], let root = environment["GATEWAY_TEST_SFTP_OPENSSH_ROOT"],
                  let knownHosts = environment["GATEWAY_TEST_SFTP_OPENSSH_KNOWN_HOSTS"], let password = environment["GATEWAY_TEST_SFTP_PASSWORD"] else {
                throw CLITestSetupError("GATEWAY_TEST_SFTP_OPENSSH_* not set: run ./scripts/test.sh (it starts the servers)")
            }
            return #"{"type": "sftp", "host": "127.0.0.1", "port": \#(port), "user": "gatewaysftp", "password": "\#(password)", "known_hosts": "\#(knownHosts)", "root": "\#(root)""#
        }, showsTemporary: true),
    ]

    /// An ordinary temporary's name, with its owner: `.gateway-HOST-PID-`.
    static var ownedTemporary: Regex<AnyRegexOutput> { try! Regex(#"\.gateway-[0-9a-f]{8}-[0-9]+-[0-9a-z]+\.partial$"#) }

    @Test("the rerun succeeds byte-equal and leaves no temporary", .timeLimit(.minutes(2)), arguments: Self.targets)
    func killThenRerun(target: Target) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let server = try Self.source()
        defer { server.stop() }
        let folder = "kill-\(UUID().uuidString.prefix(8))"
        let environment = ProcessInfo.processInfo.environment
        let destination = try target.config(environment).map { #"\#($0), "trash_dir": "/\#(folder)/.gateway-trash"}"# }
            ?? #"{"type": "local", "root": "\#(s.path("local"))"}"#
        try FileManager.default.createDirectory(atPath: s.path("local"), withIntermediateDirectories: true)
        try s.write("config.json", Data(#"{"remotes": {"src": {"type": "webdav", "url": "http://127.0.0.1:\#(server.port)/"}, "r": \#(destination)}}"#.utf8))
        let env = ["GATEWAY_CONFIG": s.path("config.json"), "GATEWAY_STATE_DIR": s.path("state")]
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "r:\(folder)"], extraEnvironment: env) }
        _ = try await s.runner.run(["mkdir", "r:\(folder)/t"], extraEnvironment: env)

        func listing() async throws -> [String] {
            let listed = try await s.runner.run(["ls", "-R", "r:\(folder)/t"], extraEnvironment: env)
            return listed.text.split(separator: "\n").map(String.init)
        }
        let running = try s.runner.start(["copy", "src:dir", "r:\(folder)/t"], extraEnvironment: env)
        // Wait for the temporary where the backend shows it; elsewhere, for the copy to be reading
        // a file from the source (which sends it over 30 s), so its upload is under way.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        var sawTemporary = false
        var reading = false
        while clock.now < deadline {
            if target.showsTemporary {
                if try await listing().contains(where: { $0.contains(Self.ownedTemporary) }) {
                    sawTemporary = true
                    break
                }
            } else if server.requests.contains(where: { $0.method == "GET" }) {
                reading = true
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(sawTemporary || reading, "the copy never started its upload")
        running.kill()
        if target.showsTemporary { #expect(sawTemporary, "the upload's temporary was never seen") }
        if sawTemporary { #expect(try await listing().contains { $0.hasSuffix(".partial") }, "kill -9 leaves the temporary") }

        let again = try await s.runner.run(["copy", "src:dir", "r:\(folder)/t"], extraEnvironment: env)
        #expect(again.status == 0, "\(again.stderr)")
        if sawTemporary {
            #expect(again.stderr.contains("an upload's temporary left by an interrupted run"), "the leftover is removed: \(again.stderr)")
        }
        let left = try await listing().sorted()
        #expect(left == ["big.bin", "mid.bin"], "only the files are left: \(left)\n\(again.stderr)")
        for (name, size) in Self.files {
            let content = try await s.runner.run(["cat", "r:\(folder)/t/\(name)"], extraEnvironment: env)
            #expect(content.stdout == Data(repeating: UInt8(ascii: "x"), count: size), "\(name)")
        }
    }
}

/// `gateway cleanup`: which leftovers it removes, and which it never touches.
@Suite("gateway cleanup")
struct CleanupCLITests {
    @Test("removes temporaries of processes gone from this machine and, by age, the rest; never a live one")
    func cleanup() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("config.json", Data(#"{"remotes": {"loc": {"type": "local", "root": "\#(s.path("root"))"}}}"#.utf8))
        let environment = ["GATEWAY_CONFIG": s.path("config.json"), "GATEWAY_STATE_DIR": s.path("state")]
        let gone = try ChildProcess.spawn("/bin/true", [])
        await gone.exited()
        let host = TemporaryName.hostID
        let dead = "a/.f.txt.gateway-\(host)-\(gone.processIdentifier)-k3j.partial"
        let live = "a/.g.txt.gateway-\(host)-\(getpid())-k3j.partial"       // this test process: running
        let foreign = "a/b/.h.txt.gateway-0badc0de-4242-k3j.partial"         // another machine: by age only
        let old = "a/b/.i.txt.gateway-zk3j1.partial"                         // the older format: by age only
        let resumable = "a/.j.bin.gateway-resume-3f2a.partial"
        for name in [dead, live, foreign, old, resumable, "a/keep.txt", "a/.hidden"] { try s.write("root/" + name, Data("x".utf8)) }
        let twoDaysAgo = Date().addingTimeInterval(-2 * 86_400)
        try FileManager.default.setAttributes([.modificationDate: twoDaysAgo], ofItemAtPath: s.path("root/" + old))

        let dry = try await s.runner.run(["cleanup", "--dry-run", "loc:"], extraEnvironment: environment)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(Set(dry.text.split(separator: "\n").map(String.init)) == ["would remove loc:/\(dead) (1 B)", "would remove loc:/\(old) (1 B)"],
                "\(dry.text)")
        #expect(dry.stderr.contains("cleanup: would remove 2 leftover temporaries"), "\(dry.stderr)")
        #expect(s.exists("root/" + dead) && s.exists("root/" + old), "a dry run removes nothing")

        let removed = try await s.runner.run(["cleanup", "--json", "loc:a"], extraEnvironment: environment)
        #expect(removed.status == 0, "\(removed.stderr)")
        let entries = try #require(try JSONSerialization.jsonObject(with: removed.stdout) as? [[String: Any]], "\(removed.text)")
        #expect(Set(entries.compactMap { $0["path"] as? String }) == ["loc:/\(dead)", "loc:/\(old)"])
        #expect(entries.allSatisfy { $0["removed"] as? Bool == true })
        #expect(!s.exists("root/" + dead) && !s.exists("root/" + old))
        for kept in [live, foreign, resumable, "a/keep.txt", "a/.hidden"] { #expect(s.exists("root/" + kept), "\(kept) kept") }

        // --older-than: every leftover not written by a running process goes once old enough.
        let aged = try await s.runner.run(["cleanup", "--older-than", "0s", "loc:"], extraEnvironment: environment)
        #expect(aged.status == 0, "\(aged.stderr)")
        #expect(!s.exists("root/" + foreign) && !s.exists("root/" + resumable))
        #expect(s.exists("root/" + live), "a temporary a running process writes is never removed")
    }
}
