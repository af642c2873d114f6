import Foundation
@testable import GatewayTestSupport
import Testing

/// The CLI with hostile values from users and configs: no trap (exit 132), clear errors, escaped output.
@Suite("gateway CLI: hostile values")
struct HardeningCLITests {
    @Test("cat --offset/--count whose sum passes Int64.max reads to the end, on every backend")
    func catOverflow() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = ProcessInfo.processInfo.environment
        guard let dav = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"], let ftp = environment["GATEWAY_TEST_FTP_PYFTPDLIB_URL"] else {
            throw CLITestSetupError("GATEWAY_TEST_* not set: run ./scripts/test.sh (it starts the servers)")
        }
        let config = """
        {"remotes": {
          "dav": {"type": "webdav", "url": "\(dav)", "user": "gateway", "password_env": "SECRET"},
          "ftp": {"type": "ftp", "url": "\(ftp)", "user": "gateway", "password_env": "SECRET"}
        }}
        """
        try s.write("config.json", Data(config.utf8))
        let extra = ["GATEWAY_CONFIG": s.path("config.json"), "SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test"]
        try s.write("f.txt", Data("0123456789".utf8))
        let name = "overflow-\(UUID().uuidString.prefix(8)).txt"
        for remote in ["dav", "ftp"] {
            #expect(try await s.runner.run(["copy", "f.txt", "\(remote):\(name)"], extraEnvironment: extra).status == 0)
        }
        defer {
            for remote in ["dav", "ftp"] { _ = try? s.runner.runBlocking(["rm", "\(remote):\(name)"], extraEnvironment: extra) }
        }
        for location in ["f.txt", "dav:\(name)", "ftp:\(name)"] {
            let result = try await s.runner.run(["cat", "--offset", "4", "--count", String(Int64.max), location], extraEnvironment: extra)
            #expect(result.status == 0, "\(location): \(result.status) \(result.stderr)")
            #expect(result.text == "456789", "\(location)")
            let huge = try await s.runner.run(["cat", "--offset", String(Int64.max), "--count", String(Int64.max), location], extraEnvironment: extra)
            #expect(huge.status == 0 && huge.text.isEmpty, "\(location): \(huge.status) \(huge.stderr)")
        }
    }

    @Test("config values that would overflow later are refused by config validate (exit 2), naming the key")
    func configRanges() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        for (key, value) in [("idle_timeout", "1e16"), ("connect_timeout", "1e300"), ("low_speed_time", "0"), ("low_speed_limit", "-1")] {
            for type in ["webdav", "ftp"] {
                let url = type == "ftp" ? "ftp://127.0.0.1/" : "http://127.0.0.1/"
                try s.write("c.json", Data(#"{"remotes": {"r": {"type": "\#(type)", "url": "\#(url)", "\#(key)": \#(value)}}}"#.utf8))
                let result = try await s.runner.run(["--config", s.path("c.json"), "config", "validate"])
                #expect(result.status == 2, "\(type) \(key)=\(value): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains(key), "\(result.stderr)")
            }
        }
    }

    @Test("control characters in names and paths are escaped on stderr, and on stdout only when it is a terminal")
    func escapedNames() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let hostile = "evil\u{1B}]0;pwned\u{07}\u{1B}[2Jname\rfake line\nx"
        try s.write("dir/" + hostile, Data("x".utf8))
        let missing = try await s.runner.run(["stat", "dir/\(hostile)-missing"])
        #expect(missing.status == 1)
        #expect(!missing.stderr.dropLast().unicodeScalars.contains { $0.value < 0x20 }, "\(missing.stderr.debugDescription)")
        #expect(missing.stderr.contains("evil\\e]0;pwned\\a\\e[2Jname\\rfake line\\nx-missing"), "\(missing.stderr)")
        // Piped: the real bytes (scripts read them); --json escapes them in its strings.
        let piped = try await s.runner.run(["ls", "dir"])
        #expect(piped.text == hostile + "\n")
        // On a terminal (script(1) gives the command one): escaped.
        let script = try ChildProcess.run("/usr/bin/script", ["-qec", "'\(GatewayRunner.binary)' ls dir", "/dev/null"],
                                          environment: s.runner.environment, directory: s.base)
        #expect(script.status == 0, "\(String(decoding: script.stderr, as: UTF8.self))")
        let terminal = String(decoding: script.stdout, as: UTF8.self)
        #expect(terminal.contains("evil\\e]0;pwned\\a\\e[2Jname\\rfake line\\nx"), "\(terminal.debugDescription)")
        #expect(!terminal.contains("\u{1B}"), "\(terminal.debugDescription)")
    }
}
