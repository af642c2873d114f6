import Foundation
@testable import GatewayTestSupport
import Testing

/// `gateway` against the FTP test servers: round trips through FTP and WebDAV, errors, quota.
@Suite("gateway CLI with FTP remotes")
struct FTPCLITests {
    /// Writes a config with FTP remotes `vsftpd`, `ftps` (explicit TLS) and `pyftpd`, and WebDAV
    /// remote `apache`; the passwords come from the environment.
    func configure(_ s: CLIScratch) async throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment
        guard let vsftpd = environment["GATEWAY_TEST_FTP_VSFTPD_URL"], let tls = environment["GATEWAY_TEST_FTP_VSFTPD_TLS_URL"],
              let ca = environment["GATEWAY_TEST_FTP_VSFTPD_TLS_CA"], let pyftpd = environment["GATEWAY_TEST_FTP_PYFTPDLIB_URL"],
              let vsUser = environment["GATEWAY_TEST_FTP_VSFTPD_USER"], let pyUser = environment["GATEWAY_TEST_FTP_PYFTPDLIB_USER"],
              let password = environment["GATEWAY_TEST_FTP_PASSWORD"], let apache = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"] else {
            throw CLITestSetupError("GATEWAY_TEST_FTP_* / GATEWAY_TEST_WEBDAV_* not set: run ./scripts/test.sh (it starts the servers)")
        }
        let config = """
        {"remotes": {
          "vsftpd": {"type": "ftp", "url": "\(vsftpd)", "user": "\(vsUser)", "password_env": "FTP_SECRET"},
          "ftps": {"type": "ftp", "url": "\(tls)", "user": "\(vsUser)", "password_env": "FTP_SECRET", "tls": "explicit", "ca_file": "\(ca)"},
          "pyftpd": {"type": "ftp", "url": "\(pyftpd)", "user": "\(pyUser)", "password_env": "FTP_SECRET"},
          "apache": {"type": "webdav", "url": "\(apache)", "user": "\(environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway")",
                     "password_env": "DAV_SECRET"}
        }}
        """
        try s.write("config.json", Data(config.utf8))
        return ["GATEWAY_CONFIG": s.path("config.json"), "FTP_SECRET": password,
                "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test"]
    }

    func makeTree(_ s: CLIScratch) async throws {
        let names = ["a b.txt", "naïve café.txt", "#hash", "100%", "what?.txt", ".hidden", "x:y", "🚀", "semi;colon&amp", "ends with space "]
        for (index, name) in names.enumerated() { try s.write("src/\(name)", Data("file \(index)\n".utf8)) }
        try s.write("src/sub dir/nested/deep.bin", Data((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        try s.write("src/sub dir/zero", Data())
        try FileManager.default.createDirectory(atPath: s.path("src/empty folder/also empty"), withIntermediateDirectories: true)
    }

    @Test("local -> FTP (vsftpd) -> FTPS -> FTP (pyftpdlib, MLSD) -> WebDAV -> local round trip is byte-equal", .timeLimit(.minutes(3)))
    func roundTrip() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try await configure(s)
        try await makeTree(s)
        let folder = "rt-\(UUID().uuidString.prefix(8))"
        let ftpsFolder = folder + "-tls"
        defer {
            for location in ["vsftpd:\(folder)", "ftps:\(ftpsFolder)", "pyftpd:\(folder)", "apache:\(folder)"] {
                _ = try? s.runner.runBlocking(["rm", "-r", location], extraEnvironment: environment)
            }
        }
        let hops = [("src", "vsftpd:\(folder)"), ("vsftpd:\(folder)", "ftps:\(ftpsFolder)"), ("ftps:\(ftpsFolder)", "pyftpd:\(folder)"),
                    ("pyftpd:\(folder)", "apache:\(folder)"), ("apache:\(folder)", "back")]
        for (from, to) in hops {
            let result = try await s.runner.run(["copy", from, to], extraEnvironment: environment)
            #expect(result.status == 0, "copy \(from) \(to): \(result.stderr)")
        }
        #expect(try s.tree("back") == s.tree("src"))
        for item in try s.tree("src") where !item.hasSuffix("/") {
            #expect(try s.read("back/" + item) == s.read("src/" + item), "\(item) differs")
        }
        // A second copy of a hop finds everything unchanged: pyftpdlib took the times vsftpd showed
        // (MFMT), to LIST's minute, and the comparison allows the coarser side's precision.
        let again = try await s.runner.run(["copy", "--json", "ftps:\(ftpsFolder)", "pyftpd:\(folder)"], extraEnvironment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.text.contains("\"copied\":0") || again.text.contains("\"copied\" : 0"), "\(again.text)")
        let ranged = try await s.runner.run(["cat", "--offset", "1000", "--count", "10", "vsftpd:\(folder)/sub dir/nested/deep.bin"],
                                      extraEnvironment: environment)
        #expect(ranged.stdout == (try s.read("src/sub dir/nested/deep.bin")).subdata(in: 1000..<1010))
        let check = try await s.runner.run(["check", "src", "ftps:\(ftpsFolder)"], extraEnvironment: environment)
        #expect(check.status == 0, "\(check.text)")
    }

    @Test("wrong password: exit 1, one clear line with the 530, the password printed nowhere")
    func wrongPassword() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        var environment = try await configure(s)
        environment["FTP_SECRET"] = "Not-The-Password-917"
        let result = try await s.runner.run(["--verbose", "ls", "pyftpd:"], extraEnvironment: environment)
        #expect(result.status == 1)
        #expect(result.stderr.contains("gateway: ls pyftpd:: FTP 530"), "\(result.stderr)")
        #expect(!result.text.contains("Not-The-Password-917"))
    }

    @Test("about on FTP: one line saying FTP has no quota, exit 1")
    func aboutWithoutQuota() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try await configure(s)
        let result = try await s.runner.run(["about", "vsftpd:"], extraEnvironment: environment)
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("do not report quota"))
    }

    @Test("a missing path: exit 1 and 'FTP 550 not found' with the server's own words (550 can also mean no permission)")
    func missingPath() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try await configure(s)
        for remote in ["vsftpd", "pyftpd"] {
            let missing = "no-such-\(UUID().uuidString.prefix(6))"
            let result = try await s.runner.run(["stat", "\(remote):\(missing)"], extraEnvironment: environment)
            #expect(result.status == 1)
            // vsftpd answers SIZE with "Could not get file size.", pyftpdlib MLST with "No such file or directory.".
            let words = remote == "vsftpd" ? "Could not get file size." : "No such file or directory."
            #expect(result.stderr == "gateway: stat \(remote):\(missing): FTP 550 not found: \(words)\n", "\(result.stderr)")
        }
    }
}
