import Foundation
@testable import GatewayTestSupport
import Testing

/// `gateway` against the SFTP test servers (OpenSSH, `rclone serve sftp`, AsyncSSH): round trips
/// through SFTP, WebDAV and FTP with awkward names, keys and passphrases from the config, the
/// system `ssh` channel, and the errors a user meets first.
@Suite("gateway CLI with SFTP remotes")
struct SFTPCLITests {
    /// Writes a config with SFTP remotes `openssh`, `rclone` and `asyncssh` (passwords from the
    /// environment, each server's known_hosts), `keyed` (OpenSSH with the Ed25519 key that has a
    /// passphrase), `viassh` (OpenSSH through the system ssh with an RSA key), WebDAV `apache` and FTP `pyftpd`.
    func configure(_ s: CLIScratch, knownHosts: String? = nil) async throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment
        func value(_ name: String) throws -> String {
            guard let value = environment[name] else {
                throw CLITestSetupError("\(name) not set: run ./scripts/test.sh (it starts the servers)")
            }
            return value
        }
        let opensshHosts = try knownHosts ?? value("GATEWAY_TEST_SFTP_OPENSSH_KNOWN_HOSTS")
        let openssh = #""host": "127.0.0.1", "port": \#(try value("GATEWAY_TEST_SFTP_OPENSSH_PORT")), "user": "gatewaysftp", "known_hosts": "\#(opensshHosts)", "root": "\#(try value("GATEWAY_TEST_SFTP_OPENSSH_ROOT"))""#
        let config = """
        {"remotes": {
          "openssh": {"type": "sftp", \(openssh), "password_env": "SFTP_SECRET"},
          "keyed": {"type": "sftp", \(openssh), "key_file": "\(try value("GATEWAY_TEST_SFTP_OPENSSH_KEY_PASS"))", "key_passphrase_env": "KEY_SECRET"},
          "viassh": {"type": "sftp", \(openssh), "key_file": "\(try value("GATEWAY_TEST_SFTP_OPENSSH_KEY_RSA"))", "ssh_command": "ssh"},
          "rclone": {"type": "sftp", "host": "127.0.0.1", "port": \(try value("GATEWAY_TEST_SFTP_RCLONE_PORT")), "user": "gateway",
                     "known_hosts": "\(try value("GATEWAY_TEST_SFTP_RCLONE_KNOWN_HOSTS"))", "password_env": "SFTP_SECRET"},
          "asyncssh": {"type": "sftp", "host": "127.0.0.1", "port": \(try value("GATEWAY_TEST_SFTP_ASYNCSSH_PORT")), "user": "gateway",
                       "known_hosts": "\(try value("GATEWAY_TEST_SFTP_ASYNCSSH_KNOWN_HOSTS"))", "password_env": "SFTP_SECRET"},
          "apache": {"type": "webdav", "url": "\(try value("GATEWAY_TEST_WEBDAV_APACHE_URL"))", "user": "\(environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway")",
                     "password_env": "DAV_SECRET"},
          "pyftpd": {"type": "ftp", "url": "\(try value("GATEWAY_TEST_FTP_PYFTPDLIB_URL"))", "user": "\(try value("GATEWAY_TEST_FTP_PYFTPDLIB_USER"))",
                     "password_env": "FTP_SECRET"}
        }}
        """
        try s.write("config.json", Data(config.utf8))
        return ["GATEWAY_CONFIG": s.path("config.json"), "GATEWAY_STATE_DIR": s.path("state"), "SFTP_SECRET": try value("GATEWAY_TEST_SFTP_PASSWORD"),
                "KEY_SECRET": "gateway-pass", "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test",
                "FTP_SECRET": try value("GATEWAY_TEST_FTP_PASSWORD")]
    }

    func makeTree(_ s: CLIScratch) throws {
        let names = ["a b.txt", "naïve café.txt", "#hash", "100%", "what?.txt", ".hidden", "x:y", "🚀", "semi;colon&amp", "ends with space ",
                     "quote\"d", "back\\slash", "tab\there"]
        for (index, name) in names.enumerated() { try s.write("src/\(name)", Data("file \(index)\n".utf8)) }
        try s.write("src/sub dir/nested/deep.bin", Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        try s.write("src/sub dir/zero", Data())
        try FileManager.default.createDirectory(atPath: s.path("src/empty folder/also empty"), withIntermediateDirectories: true)
    }

    @Test("local -> SFTP (OpenSSH) -> SFTP (rclone) -> SFTP (AsyncSSH) -> WebDAV -> local round trip is byte-equal; unchanged files are skipped",
          .timeLimit(.minutes(3)))
    func roundTrip() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try await configure(s)
        try makeTree(s)
        let folder = "rt-\(UUID().uuidString.prefix(8))"
        defer {
            for location in ["openssh:\(folder)", "rclone:\(folder)", "asyncssh:\(folder)", "apache:\(folder)"] {
                _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", location], extraEnvironment: environment)
            }
        }
        // The tab goes to the SFTP servers, not to WebDAV on Apache's side of the trip.
        let hops = [("src", "openssh:\(folder)"), ("openssh:\(folder)", "rclone:\(folder)"), ("rclone:\(folder)", "asyncssh:\(folder)"),
                    ("asyncssh:\(folder)", "back")]
        for (from, to) in hops {
            // deep.bin (3 MB) goes in several ranges at once where the destination takes them.
            let result = try await s.runner.run(["copy", "-v", "--multi-thread-cutoff", "1M", from, to], extraEnvironment: environment)
            #expect(result.status == 0, "copy \(from) \(to): \(result.stderr)")
            if to.hasPrefix("openssh:") || to.hasPrefix("asyncssh:") {
                #expect(result.stderr.contains("uploading in ranges"), "\(to): \(result.stderr.suffix(2000))")
            }
        }
        #expect(try s.tree("back") == s.tree("src"))
        for item in try s.tree("src") where !item.hasSuffix("/") {
            #expect(try s.read("back/" + item) == s.read("src/" + item), "\(item) differs")
        }
        // Modification times went along (SETSTAT): a second copy of a hop sends nothing.
        let again = try await s.runner.run(["copy", "--json", "openssh:\(folder)", "asyncssh:\(folder)"], extraEnvironment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.text.contains("\"copied\":0") || again.text.contains("\"copied\" : 0"), "\(again.text)")
        let ranged = try await s.runner.run(["cat", "--offset", "1000000", "--count", "10", "rclone:\(folder)/sub dir/nested/deep.bin"],
                                            extraEnvironment: environment)
        #expect(ranged.stdout == (try s.read("src/sub dir/nested/deep.bin")).subdata(in: 1_000_000..<1_000_010))
        let check = try await s.runner.run(["check", "src", "openssh:\(folder)"], extraEnvironment: environment)
        #expect(check.status == 0, "\(check.text)")
        // On to WebDAV and FTP and back, without the name Apache and FTP can't carry.
        try FileManager.default.removeItem(atPath: s.path("src/tab\there"))
        _ = try await s.runner.run(["rm", "openssh:\(folder)/tab\there"], extraEnvironment: environment)
        for (from, to) in [("openssh:\(folder)", "apache:\(folder)"), ("apache:\(folder)", "back2")] {
            let result = try await s.runner.run(["copy", from, to], extraEnvironment: environment)
            #expect(result.status == 0, "copy \(from) \(to): \(result.stderr)")
        }
        #expect(try s.tree("back2") == s.tree("src"))
    }

    @Test("a key with a passphrase from key_passphrase_env, and an RSA key through ssh_command, log in")
    func keysFromTheConfig() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try await configure(s)
        let name = "k-\(UUID().uuidString.prefix(8)).txt"
        let put = try await s.runner.run(["rcat", "keyed:\(name)"], stdin: Data("by key\n".utf8), extraEnvironment: environment)
        #expect(put.status == 0, "\(put.stderr)")
        let read = try await s.runner.run(["cat", "viassh:\(name)"], extraEnvironment: environment)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == Data("by key\n".utf8))
        _ = try await s.runner.run(["rm", "--no-trash", "viassh:\(name)"], extraEnvironment: environment)
        var wrong = environment
        wrong["KEY_SECRET"] = "not-it"
        let refused = try await s.runner.run(["ls", "keyed:"], extraEnvironment: wrong)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("wrong passphrase"), "\(refused.stderr)")
        #expect(!refused.text.contains("not-it"))
    }

    @Test("wrong password: exit 1, one line naming the user and password, the password printed nowhere")
    func wrongPassword() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        var environment = try await configure(s)
        environment["SFTP_SECRET"] = "Not-The-Password-917"
        let result = try await s.runner.run(["--verbose", "ls", "openssh:"], extraEnvironment: environment)
        #expect(result.status == 1)
        #expect(result.stderr.contains("not authenticated as gatewaysftp"), "\(result.stderr)")
        #expect(!result.text.contains("Not-The-Password-917"))
    }

    @Test("an unknown host key: exit 1, the offered fingerprint and what to do, nothing sent")
    func unknownHostKey() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("empty_known_hosts", Data())
        let environment = try await configure(s, knownHosts: s.path("empty_known_hosts"))
        let fingerprint = try #require(ProcessInfo.processInfo.environment["GATEWAY_TEST_SFTP_OPENSSH_FINGERPRINT"])
        let result = try await s.runner.run(["ls", "openssh:"], extraEnvironment: environment)
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(fingerprint) && result.stderr.contains("host_key_fingerprint"), "\(result.stderr)")
    }

    @Test("about: OpenSSH reports space (statvfs@openssh.com); AsyncSSH has none to report, one line and exit 1")
    func about() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try await configure(s)
        let openssh = try await s.runner.run(["about", "--json", "openssh:"], extraEnvironment: environment)
        #expect(openssh.status == 0, "\(openssh.stderr)")
        #expect(openssh.text.contains("\"free\"") || openssh.text.contains("\"available\""), "\(openssh.text)")
        let asyncssh = try await s.runner.run(["about", "asyncssh:"], extraEnvironment: environment)
        #expect(asyncssh.status == 1)
        #expect(asyncssh.stderr.split(separator: "\n").count == 1, "\(asyncssh.stderr)")
        #expect(asyncssh.stderr.contains("statvfs"), "\(asyncssh.stderr)")
    }

    @Test("a missing path: exit 1, 'no such file' with the path")
    func missingPath() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try await configure(s)
        for remote in ["openssh", "rclone", "asyncssh"] {
            let missing = "no-such-\(UUID().uuidString.prefix(6))"
            let result = try await s.runner.run(["stat", "\(remote):\(missing)"], extraEnvironment: environment)
            #expect(result.status == 1)
            #expect(result.stderr.contains(missing) && result.stderr.lowercased().contains("no such file"), "\(remote): \(result.stderr)")
        }
    }
}
