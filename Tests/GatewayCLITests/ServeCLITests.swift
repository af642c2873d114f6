import Foundation
@testable import GatewayTestSupport
import Testing

/// `gateway serve webdav`, started as a user starts it, checked by real clients: the litmus
/// WebDAV conformance suite (Debian's `litmus`), curl, and `gateway` itself as a WebDAV client.
@Suite("gateway serve webdav")
struct ServeCLITests {
    /// A running server over `location`, and its URL.
    struct Served {
        let running: GatewayRunner.Running
        let url: String
        let log: String
        func stop() { running.kill() }
    }

    static let user = "litmus-user"
    static let password = "litmus-pass 1"

    /// Starts `gateway serve webdav` on a free port and waits for its "serving" line.
    static func serve(_ s: CLIScratch, _ location: String, extra: [String] = [], environment: [String: String] = [:]) async throws -> Served {
        let log = s.path("serve-\(UUID().uuidString.prefix(6)).log")
        let running = try s.runner.start(["serve", "webdav", "--addr", "127.0.0.1:0", "--user", user, "--password-env", "SERVE_PASS"] + extra + [location],
                                         extraEnvironment: environment.merging(["SERVE_PASS": password]) { $1 }, stderrFile: log)
        for _ in 0..<200 {
            if let text = try? String(contentsOfFile: log, encoding: .utf8), let range = text.range(of: "at http://") {
                let rest = text[range.upperBound...]
                if let end = rest.firstIndex(where: { $0 == " " || $0 == "\n" }) {
                    var url = "http://" + rest[..<end]
                    while url.hasSuffix("/") { url.removeLast() }   // the line ends the URL with a slash
                    return Served(running: running, url: url, log: log)
                }
            }
            if !running.process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        running.kill()
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        throw CLITestSetupError("gateway serve webdav did not start: \(text)")
    }

    /// Runs litmus's `suites` against `url`; returns each suite's summary line.
    static func litmus(_ url: String, suites: [String], in folder: String) throws -> [String: String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/litmus")
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/litmus") else {
            throw CLITestSetupError("litmus is not installed: run scripts/setup-deps.sh")
        }
        process.arguments = [url, user, password]
        process.environment = ProcessInfo.processInfo.environment.merging(["TESTS": suites.joined(separator: " ")]) { $1 }
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        var summaries: [String: String] = [:]
        for line in text.split(separator: "\n") where line.contains("<- summary for `") {
            if let start = line.range(of: "`"), let end = line[start.upperBound...].firstIndex(of: "'") {
                summaries[String(line[start.upperBound..<end])] = String(line)
            }
        }
        summaries["output"] = text
        return summaries
    }

    /// Runs litmus's `suites` against `url` and expects every test of each to pass.
    static func expectAllPassed(_ url: String, suites: [String], in folder: String) throws {
        let result = try litmus(url, suites: suites, in: folder)
        for suite in suites {
            let summary = try #require(result[suite], "no summary for \(suite): \(result["output"] ?? "")")
            #expect(summary.contains(" 0 failed") && summary.hasSuffix("100.0%"), "\(summary)\n\(result["output"] ?? "")")
        }
    }

    @Test("litmus basic, copymove, props, locks and http pass 100% with a Local remote behind the server", .timeLimit(.minutes(3)))
    func litmusLocal() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try FileManager.default.createDirectory(atPath: s.path("served"), withIntermediateDirectories: true)
        let served = try await Self.serve(s, "served")
        defer { served.stop() }
        try Self.expectAllPassed(served.url + "/", suites: ["basic", "copymove", "props", "locks", "http"], in: s.base)
    }

    @Test("litmus basic, copymove, locks and http pass 100% with an FTP remote (vsftpd) behind the server", .timeLimit(.minutes(3)))
    func litmusFTP() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["GATEWAY_TEST_FTP_VSFTPD_URL"], let user = environment["GATEWAY_TEST_FTP_VSFTPD_USER"] else {
            throw CLITestSetupError("GATEWAY_TEST_FTP_VSFTPD_URL not set: run ./scripts/test.sh (it starts the FTP servers)")
        }
        try s.write("config.json", Data("""
        {"remotes": {"ftp": {"type": "ftp", "url": "\(url)", "user": "\(user)", "password_env": "FTP_SECRET"}}}
        """.utf8))
        let env = ["GATEWAY_CONFIG": s.path("config.json"), "FTP_SECRET": environment["GATEWAY_TEST_FTP_PASSWORD"] ?? "gateway-test"]
        let folder = "litmus-\(UUID().uuidString.prefix(8))"
        #expect(try await s.runner.run(["mkdir", "ftp:\(folder)"], extraEnvironment: env).status == 0)
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "ftp:\(folder)"], extraEnvironment: env) }
        let served = try await Self.serve(s, "ftp:\(folder)", environment: env)
        defer { served.stop() }
        try Self.expectAllPassed(served.url + "/", suites: ["basic", "copymove", "locks", "http"], in: s.base)
    }

    @Test("paths stay inside the served folder; no credentials, no access", .timeLimit(.minutes(1)))
    func confinement() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("served/inside.txt", Data("inside".utf8))
        try s.write("secret.txt", Data("outside".utf8))
        let served = try await Self.serve(s, "served")
        defer { served.stop() }
        func status(_ path: String, auth: Bool = true, method: String = "GET") throws -> Int {
            var arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--path-as-is", "-X", method]
            if auth { arguments += ["-u", "\(Self.user):\(Self.password)"] }
            let result = try MediaFiles.run("/usr/bin/curl", arguments + [served.url + path])
            return Int(result) ?? -1
        }
        #expect(try status("/inside.txt") == 200)
        #expect(try status("/inside.txt", auth: false) == 401)
        for escape in ["/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E%2Fsecret.txt", "/..%2fsecret.txt", "/a/../../secret.txt", "/%00"] {
            #expect(try status(escape) == 404, "\(escape)")
        }
        #expect(try status("/", method: "PROPFIND") == 403, "Depth: infinity (the default) is refused")
    }

    @Test("gateway as the client: a tree copied in and out is byte-equal; ranges; a read-only server refuses changes", .timeLimit(.minutes(2)))
    func gatewayClient() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try FileManager.default.createDirectory(atPath: s.path("served"), withIntermediateDirectories: true)
        let names = ["a b.txt", "naïve café.txt", "#hash", "100%", "what?.txt", "x:y"]
        for (index, name) in names.enumerated() { try s.write("src/\(name)", Data("file \(index)\n".utf8)) }
        try s.write("src/sub/big.bin", Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        let served = try await Self.serve(s, "served")
        defer { served.stop() }
        try s.write("config.json", Data("""
        {"remotes": {"srv": {"type": "webdav", "url": "\(served.url)/", "user": "\(Self.user)", "password_env": "SERVE_PASS"}}}
        """.utf8))
        let env = ["GATEWAY_CONFIG": s.path("config.json"), "SERVE_PASS": Self.password]
        let up = try await s.runner.run(["copy", "src", "srv:tree"], extraEnvironment: env)
        #expect(up.status == 0, "\(up.stderr)")
        #expect(try s.tree("served/tree") == s.tree("src"))
        let down = try await s.runner.run(["copy", "srv:tree", "back"], extraEnvironment: env)
        #expect(down.status == 0, "\(down.stderr)\n\((try? String(contentsOfFile: served.log, encoding: .utf8)) ?? "")")
        for item in try s.tree("src") where !item.hasSuffix("/") {
            #expect(try s.read("back/" + item) == s.read("src/" + item), "\(item)")
        }
        let range = try await s.runner.run(["cat", "--offset", "1000000", "--count", "10", "srv:tree/sub/big.bin"], extraEnvironment: env)
        #expect(range.stdout == (try s.read("src/sub/big.bin")).subdata(in: 1_000_000..<1_000_010))
        let check = try await s.runner.run(["check", "src", "srv:tree"], extraEnvironment: env)
        #expect(check.status == 0, "\(check.text) \(check.stderr)")

        let readOnly = try await Self.serve(s, "served", extra: ["--read-only"])
        defer { readOnly.stop() }
        try s.write("config.json", Data("""
        {"remotes": {"ro": {"type": "webdav", "url": "\(readOnly.url)/", "user": "\(Self.user)", "password_env": "SERVE_PASS"}}}
        """.utf8))
        #expect(try await s.runner.run(["cat", "ro:tree/a b.txt"], extraEnvironment: env).stdout == Data("file 0\n".utf8))
        let refused = try await s.runner.run(["rcat", "ro:new.txt"], stdin: Data("x".utf8), extraEnvironment: env)
        #expect(refused.status == 1 && !s.exists("served/new.txt"), "\(refused.stderr)")
    }
}
