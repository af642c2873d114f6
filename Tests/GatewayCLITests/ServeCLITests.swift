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
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/litmus") else {
            throw CLITestSetupError("litmus is not installed: run scripts/setup-deps.sh")
        }
        let result = try ChildProcess.run("/usr/bin/litmus", [url, user, password],
                                          environment: ProcessInfo.processInfo.environment.merging(["TESTS": suites.joined(separator: " ")]) { $1 },
                                          directory: folder)
        let text = String(decoding: result.stdout + result.stderr, as: UTF8.self)
        var summaries: [String: String] = [:]
        for line in text.split(separator: "\n") where line.contains("<- summary for `") {
            if let start = line.range(of: "`"), let end = line[start.upperBound...].firstIndex(of: "'") {
                summaries[String(line[start.upperBound..<end])] = String(line)
            }
        }
        summaries["output"] = text
        return summaries
    }

    /// Runs litmus's `suites` against `url` and expects every test of each to pass. A failure shows
    /// litmus's output and the last requests in the server's log (`log`), which say which one failed.
    static func expectAllPassed(_ url: String, suites: [String], in folder: String, log: String? = nil) throws {
        let result = try litmus(url, suites: suites, in: folder)
        let server = log.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
            .map { "\nserver log (last 60 lines):\n" + $0.split(separator: "\n").suffix(60).joined(separator: "\n") } ?? ""
        for suite in suites {
            let summary = try #require(result[suite], "no summary for \(suite): \(result["output"] ?? "")\(server)")
            #expect(summary.contains(" 0 failed") && summary.hasSuffix("100.0%"), "\(summary)\n\(result["output"] ?? "")\(server)")
        }
    }

    @Test("litmus basic, copymove, props, locks and http pass 100% with a Local remote behind the server", .timeLimit(.minutes(3)))
    func litmusLocal() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try FileManager.default.createDirectory(atPath: s.path("served"), withIntermediateDirectories: true)
        let served = try await Self.serve(s, "served")
        defer { served.stop() }
        try Self.expectAllPassed(served.url + "/", suites: ["basic", "copymove", "props", "locks", "http"], in: s.base, log: served.log)
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
        try Self.expectAllPassed(served.url + "/", suites: ["basic", "copymove", "locks", "http"], in: s.base, log: served.log)
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

    /// Runs `executable` with `arguments`, `input` on stdin, in `folder`; its exit status and output.
    static func tool(_ executable: String, _ arguments: [String], input: String = "", in folder: String,
                     environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        // One pipe for both outputs, in the order they were written (as a terminal shows them).
        let output = "\(NSTemporaryDirectory())/gateway-tool-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try ChildProcess.run("/bin/sh", ["-c", #"exec "$@" > "$0" 2>&1"#, output, executable] + arguments,
                                          environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, directory: folder,
                                          stdin: Data(input.utf8))
        return (result.status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    /// The path of a command on `$PATH`.
    static func which(_ command: String) throws -> String {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let candidate = "\(folder)/\(command)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw CLITestSetupError("\(command) is not installed: run scripts/setup-deps.sh")
    }

    @Test("cadaver as the client: folders, uploads, a lock that keeps another client out, properties, copy, move, delete",
          .timeLimit(.minutes(1)))
    func cadaverClient() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let cadaver = try Self.which("cadaver")
        try FileManager.default.createDirectory(atPath: s.path("served"), withIntermediateDirectories: true)
        try s.write("up.txt", Data("uploaded by cadaver\n".utf8))
        let served = try await Self.serve(s, "served")
        defer { served.stop() }
        // cadaver (neon) takes the credentials from ~/.netrc; the password has a space, hence the quotes.
        try s.write("home/.netrc", Data("machine 127.0.0.1\nlogin \(Self.user)\npassword \"\(Self.password)\"\n".utf8))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: s.path("home/.netrc"))
        let home = ["HOME": s.path("home")]
        let first = try Self.tool(cadaver, [served.url + "/"], input: """
            mkcol docs
            cd docs
            put up.txt
            lock up.txt
            put up.txt
            propset up.txt color blue
            propget up.txt color
            put up.txt copy-me.txt
            copy copy-me.txt copied.txt
            move copied.txt moved.txt
            delete copy-me.txt
            ls
            quit
            """, in: s.base, environment: home)
        for expected in ["Creating `docs': succeeded", "Locking `up.txt': succeeded", "Value of color is: blue",
                         "Copying `/docs/copy-me.txt' to `/docs/copied.txt':  succeeded", "Deleting `copy-me.txt': succeeded"] {
            #expect(first.output.contains(expected), "\(expected)\n\(first.output)")
        }
        #expect(!first.output.contains("failed"), "\(first.output)")
        #expect(try s.read("served/docs/up.txt") == Data("uploaded by cadaver\n".utf8))
        #expect(try s.read("served/docs/moved.txt") == Data("uploaded by cadaver\n".utf8) && !s.exists("served/docs/copy-me.txt"))
        // The first session ended without unlocking: another client, without the token, is kept out.
        try s.write("other.txt", Data("someone else\n".utf8))
        let second = try Self.tool(cadaver, [served.url + "/docs/"], input: "put other.txt up.txt\nquit\n", in: s.base, environment: home)
        #expect(second.output.contains("423") || second.output.contains("Locked"), "\(second.output)")
        #expect(try s.read("served/docs/up.txt") == Data("uploaded by cadaver\n".utf8))
    }

    @Test("rclone's WebDAV backend as the client: a tree copied in and checked, and back", .timeLimit(.minutes(2)))
    func rcloneClient() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let rclone = try Self.which("rclone")
        try FileManager.default.createDirectory(atPath: s.path("served"), withIntermediateDirectories: true)
        for (index, name) in ["a b.txt", "ünï.txt", "sub/deep/c.bin", "100%.txt"].enumerated() {
            try s.write("src/\(name)", Data(repeating: UInt8(index + 65), count: 1000 * (index + 1) * (index + 1)))
        }
        let served = try await Self.serve(s, "served")
        defer { served.stop() }
        let obscured = try Self.tool(rclone, ["obscure", Self.password], in: s.base).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let remote = ":webdav,url='\(served.url)/',user=\(Self.user),pass=\(obscured):"
        let environment = ["RCLONE_CONFIG": s.path("rclone.conf")]
        let copy = try Self.tool(rclone, ["copy", "src", remote + "tree"], in: s.base, environment: environment)
        #expect(copy.status == 0, "\(copy.output)")
        #expect(try s.tree("served/tree") == s.tree("src"))
        let check = try Self.tool(rclone, ["check", "src", remote + "tree"], in: s.base, environment: environment)
        #expect(check.status == 0, "\(check.output)")
        let back = try Self.tool(rclone, ["copy", remote + "tree", "back"], in: s.base, environment: environment)
        #expect(back.status == 0, "\(back.output)")
        #expect(try s.tree("back") == s.tree("src"))
        for item in try s.tree("src") where !item.hasSuffix("/") { #expect(try s.read("back/" + item) == s.read("src/" + item)) }
    }

    @Test("HTTPS with HTTP/2 (--tls-cert) and bcrypt users from --htpasswd, read again when the file changes",
          .timeLimit(.minutes(2)))
    func tlsAndHtpasswd() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        _ = try MediaFiles.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", s.path("key.pem"),
                                                    "-out", s.path("cert.pem"), "-days", "2", "-subj", "/CN=127.0.0.1",
                                                    "-addext", "subjectAltName=IP:127.0.0.1"])
        let htpasswd = try Self.which("htpasswd")
        #expect(try Self.tool(htpasswd, ["-B", "-b", "-c", s.path("users"), "alice", "pass word"], in: s.base).status == 0)
        try s.write("served/hello.txt", Data("hello over TLS\n".utf8))
        let log = s.path("tls.log")
        let running = try s.runner.start(["serve", "webdav", "--addr", "127.0.0.1:0", "--htpasswd", s.path("users"),
                                          "--tls-cert", s.path("cert.pem"), "--tls-key", s.path("key.pem"), "served"], stderrFile: log)
        defer { running.kill() }
        var url = ""
        for _ in 0..<200 where url.isEmpty {
            if let text = try? String(contentsOfFile: log, encoding: .utf8), let range = text.range(of: "at https://") {
                url = "https://" + text[range.upperBound...].prefix { $0 != " " && $0 != "\n" }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        try #require(!url.isEmpty, "no https URL: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        func get(_ user: String, _ extra: [String] = []) throws -> String {
            try MediaFiles.run("/usr/bin/curl", ["-s", "--cacert", s.path("cert.pem"), "-u", user, "-o", "/dev/null",
                                                 "-w", "%{http_version} %{http_code}"] + extra + [url + "hello.txt"])
        }
        #expect(try get("alice:pass word", ["--http2"]) == "2 200", "HTTP/2 where the client offers it")
        #expect(try get("alice:pass word", ["--http1.1"]) == "1.1 200")
        #expect(try get("alice:wrong") == "2 401")
        #expect(try get("nobody:pass word") == "2 401")
        #expect(try get("bob:later") == "2 401")
        #expect(try Self.tool(htpasswd, ["-B", "-b", s.path("users"), "bob", "later"], in: s.base).status == 0)
        #expect(try get("bob:later") == "2 200", "a user added to the file signs in without a restart")
        let plain = try Self.tool("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", url.replacingOccurrences(of: "https:", with: "http:") + "hello.txt"],
                                  in: s.base)
        #expect(plain.status != 0 && plain.output == "000", "plain HTTP to the TLS port is not served: \(plain)")

        // gateway as the client over HTTPS, trusting the certificate through ca_file.
        try s.write("config.json", Data("""
        {"remotes": {"tls": {"type": "webdav", "url": "\(url)", "user": "alice", "password_env": "TLS_PASS", "ca_file": "\(s.path("cert.pem"))"}}}
        """.utf8))
        let env = ["GATEWAY_CONFIG": s.path("config.json"), "TLS_PASS": "pass word"]
        try s.write("src/big.bin", Data((0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 11) }))
        #expect(try await s.runner.run(["copy", "src", "tls:in"], extraEnvironment: env).status == 0)
        #expect(try s.read("served/in/big.bin") == s.read("src/big.bin"))

        // Hash kinds too weak to keep passwords in are refused at start, naming the line.
        try s.write("weak", Data("eve:$apr1$x$y\n".utf8))
        let weak = try await s.runner.run(["serve", "webdav", "--addr", "127.0.0.1:0", "--htpasswd", s.path("weak"), "served"])
        #expect(weak.status == 2 && weak.stderr.contains("line 1") && weak.stderr.contains("bcrypt"), "\(weak.stderr)")
        let badCert = try await s.runner.run(["serve", "webdav", "--addr", "127.0.0.1:0", "--no-auth", "--tls-cert", s.path("users"),
                                              "--tls-key", s.path("key.pem"), "served"])
        #expect(badCert.status == 2 && badCert.stderr.contains("tls-cert"), "\(badCert.stderr)")
    }

    /// A process's resident memory now and at its peak (VmRSS, VmHWM), in KiB; throws when /proc
    /// cannot be read (a figure of -1 would make the memory checks pass without checking).
    static func memory(of pid: Int32) throws -> (now: Int, peak: Int) {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func value(_ key: String) throws -> Int {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }),
                  let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else {
                throw CLITestSetupError("no \(key) in /proc/\(pid)/status")
            }
            return kilobytes
        }
        return (try value("VmRSS"), try value("VmHWM"))
    }

    @Test("a folder of 100,000 entries is listed (PROPFIND Depth 1) as it is read: all there, memory flat", .timeLimit(.minutes(3)))
    func hugeFolder() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let folder = s.path("served/many")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let count = 100_000
        for index in 0..<count {
            let descriptor = open(folder + "/entry-\(index)-with-a-longer-name.txt", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
            try #require(descriptor >= 0, "cannot create entry \(index)")
            close(descriptor)
        }
        let served = try await Self.serve(s, "served")
        defer { served.stop() }
        let pid = served.running.process.processIdentifier
        // Warm up (first request, thread pools), then note where memory stands.
        _ = try Self.tool("/usr/bin/curl", ["-s", "-o", "/dev/null", "-u", "\(Self.user):\(Self.password)", served.url + "/"], in: s.base)
        let before = try Self.memory(of: pid)
        let body = s.path("listing.xml")
        let result = try Self.tool("/usr/bin/curl", ["-s", "-X", "PROPFIND", "-H", "Depth: 1", "-u", "\(Self.user):\(Self.password)",
                                                     "-D", s.path("head.txt"), "-o", body, "-w", "%{http_code} %{time_starttransfer} %{time_total}",
                                                     served.url + "/many/"], in: s.base)
        let after = try Self.memory(of: pid)
        let parts = result.output.split(separator: " ")
        try #require(parts.count == 3 && parts[0] == "207", "\(result.output)")
        let firstByte = Double(parts[1]) ?? 0, total = Double(parts[2]) ?? 0
        // Every entry is there, once, and the document is whole.
        let data = try Data(contentsOf: URL(fileURLWithPath: body))
        let responses = data.split(separator: UInt8(ascii: "\n")).filter { $0.starts(with: Array("<D:response>".utf8)) }.count
        #expect(responses == count + 1, "the folder and its \(count) entries")
        #expect(String(decoding: data.suffix(40), as: UTF8.self).contains("</D:multistatus>"))
        let head = try String(contentsOfFile: s.path("head.txt"), encoding: .utf8).lowercased()
        #expect(head.contains("transfer-encoding: chunked") && !head.contains("content-length"), "streamed, no length known up front")
        // Written as read: the body (\(data.count / 1_000_000) MB) starts long before it ends, and the
        // server's peak memory grows by far less than the body's size.
        #expect(firstByte < total / 2, "first byte at \(firstByte) s of \(total) s")
        let growth = (after.peak - before.peak) / 1024
        #expect(growth < 32, "peak RSS grew by \(growth) MB for a \(data.count / 1_000_000) MB listing (\(before) -> \(after) KiB)")

        // A browser gets the share page: one page of 100 rows, the count, a next link; chosen
        // while the listing streams, so memory stays flat here too.
        let page = try Self.tool("/usr/bin/curl", ["-s", "-H", "Accept: text/html,application/xhtml+xml", "-u", "\(Self.user):\(Self.password)",
                                                   served.url + "/many/?sort=name&order=desc"], in: s.base).output
        let rows = page.components(separatedBy: "<tr class=\"item\"").count - 1
        #expect(rows == 100)
        #expect(page.contains("<p class=\"count\">100,000 items · showing 1–100</p>"))
        #expect(page.contains("rel=\"next\" href=\"?order=desc&amp;after=f.0.entry-99909-with-a-longer-name.txt\""))
        #expect(page.contains("entry-99999-with-a-longer-name.txt") && !page.contains("entry-0-with"))
        let afterPage = try Self.memory(of: pid)
        #expect((afterPage.peak - before.peak) / 1024 < 32, "peak RSS after the page: \(afterPage) KiB")
        // A WebDAV client's GET (no text/html) still gets the plain index.
        let plain = try Self.tool("/usr/bin/curl", ["-s", "-u", "\(Self.user):\(Self.password)", served.url + "/"], in: s.base).output
        #expect(plain.contains("<ul>") && !plain.contains("class=\"listing\""))
    }

    @Test("SIGTERM: the server stops accepting; an upload in flight finishes or is discarded, never half-written",
          .timeLimit(.minutes(1)))
    func gracefulShutdown() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try FileManager.default.createDirectory(atPath: s.path("served"), withIntermediateDirectories: true)
        let content = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 17) })
        let served = try await Self.serve(s, "served")
        defer { served.stop() }
        // An upload whose bytes the test hands over itself (curl reads them from a pipe): a third,
        // a pause, SIGTERM while it is under way, then the rest.
        // A server that discards the upload closes the connection; the writes below then fail
        // (EPIPE) instead of killing the test with SIGPIPE.
        let upload = try ChildProcess.spawn("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-u", "\(Self.user):\(Self.password)",
                                                              "-T", "-", served.url + "/slow.bin"], stdin: .pipe, stdout: .pipe)
        #expect(upload.write(content.prefix(1_000_000)))
        // Under way once the server writes the body to its temporary file beside the name.
        try await waitUntil("the upload's temporary file on the server") {
            ((try? FileManager.default.contentsOfDirectory(atPath: s.path("served"))) ?? []).contains { $0 != "slow.bin" }
        }
        #expect(!s.exists("served/slow.bin"), "nothing appears under the name before every byte came")
        served.running.process.signal(SIGTERM)
        // Shutting down: new connections are refused (asked until they are, bounded).
        var refused = (status: Int32(0), output: "")
        let refusedBy = ContinuousClock.now + .seconds(30)
        repeat {
            refused = try Self.tool("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-u", "\(Self.user):\(Self.password)",
                                                      served.url + "/"], in: s.base)
            if refused.output == "000" { break }
            try await Task.sleep(for: .milliseconds(20))
        } while ContinuousClock.now < refusedBy
        #expect(refused.output == "000", "no new connections once shutting down: \(refused.output)")
        upload.write(content.dropFirst(1_000_000))
        upload.closeInput()
        await upload.exited()
        // Its few bytes wait in the pipe, read once it has ended.
        let status = String(decoding: upload.readOutputs().stdout, as: UTF8.self)
        await served.running.process.exited()
        // Finished (201 and the whole file) or discarded (nothing): never a part of it.
        if status == "201" {
            #expect(try s.read("served/slow.bin") == content)
        } else {
            #expect(!s.exists("served/slow.bin"), "an upload cut short left \(status)")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: s.path("served")).filter { $0 != "slow.bin" }
        #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
        #expect(served.running.process.terminationStatus == 0, "a clean exit after SIGTERM")
    }
}
