import Foundation
@testable import GatewayTestSupport
import Testing

/// The scenario a new user runs first, on every test server in its default configuration
/// (issue 29): awkward names copied up and back byte-equal, a second copy that sends nothing,
/// `check`, `ls -R`, `stat`, a ranged `cat`, `rcat`, and `undo` of an overwrite, a move and an
/// `rm -r`.
@Suite("gateway on every stock server: the first-day scenario")
struct StockServersCLITests {
    struct Server: Sendable, CustomTestStringConvertible {
        let name: String
        let type: String
        let urlVariable: String
        /// FTP: the variable holding the user name.
        var userVariable: String?
        /// nginx's listings leave out dot files (issue 29 part 3): they are not listed and cannot
        /// come back from the server, but a copy to it looks them up instead of sending them again.
        var listsDotFiles = true
        var testDescription: String { name }
    }

    static let servers: [Server] = [
        Server(name: "apache", type: "webdav", urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL"),
        Server(name: "nginx", type: "webdav", urlVariable: "GATEWAY_TEST_WEBDAV_NGINX_URL", listsDotFiles: false),
        Server(name: "lighttpd", type: "webdav", urlVariable: "GATEWAY_TEST_WEBDAV_LIGHTTPD_URL"),
        Server(name: "wsgidav", type: "webdav", urlVariable: "GATEWAY_TEST_WEBDAV_WSGIDAV_URL"),
        Server(name: "rclone", type: "webdav", urlVariable: "GATEWAY_TEST_WEBDAV_RCLONE_URL"),
        Server(name: "xandikos", type: "webdav", urlVariable: "GATEWAY_TEST_WEBDAV_XANDIKOS_URL"),
        Server(name: "vsftpd", type: "ftp", urlVariable: "GATEWAY_TEST_FTP_VSFTPD_URL", userVariable: "GATEWAY_TEST_FTP_VSFTPD_USER"),
        Server(name: "pyftpdlib", type: "ftp", urlVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_URL", userVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_USER"),
        Server(name: "proftpd", type: "ftp", urlVariable: "GATEWAY_TEST_FTP_PROFTPD_URL", userVariable: "GATEWAY_TEST_FTP_PROFTPD_USER"),
        Server(name: "ftp-legacy", type: "ftp", urlVariable: "GATEWAY_TEST_FTP_LEGACY_URL", userVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_USER"),
    ]

    /// Names that servers and URL handling get wrong: reserved characters, spaces, non-ASCII in
    /// both normal forms, a dot file.
    static let names = ["a b.txt", "semi;colon.txt", "#hash", "100%", "what?.txt", "plus+and&amp", "naïve café.txt",
                        "cafe\u{301} nfd.txt", "日本語", ".hidden", "quote'\"", "x=1,y@2"]

    func configure(_ s: CLIScratch, _ server: Server, folder: String) throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment[server.urlVariable] else {
            throw CLITestSetupError("\(server.urlVariable) not set: run ./scripts/test.sh (it starts the servers)")
        }
        var user = environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway"
        if let variable = server.userVariable {
            guard let value = environment[variable] else { throw CLITestSetupError("\(variable) not set: run ./scripts/test.sh") }
            user = value
        }
        let password = server.type == "ftp" ? environment["GATEWAY_TEST_FTP_PASSWORD"] : environment["GATEWAY_TEST_WEBDAV_PASSWORD"]
        let config = """
        {"remotes": {"r": {"type": "\(server.type)", "url": "\(url)", "user": "\(user)", "password_env": "R_SECRET",
                           "trash_dir": "/\(folder)/.gateway-trash"}}}
        """
        try s.write("config.json", Data(config.utf8))
        return ["GATEWAY_CONFIG": s.path("config.json"), "R_SECRET": password ?? "gateway-test", "GATEWAY_STATE_DIR": s.path("state")]
    }

    func makeTree(_ s: CLIScratch) throws {
        for (index, name) in Self.names.enumerated() { try s.write("src/\(name)", Data("file \(index)\n".utf8)) }
        try s.write("src/sub dir/nested;x/deep.bin", Data((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        try s.write("src/sub dir/zero", Data())
        try FileManager.default.createDirectory(atPath: s.path("src/empty folder"), withIntermediateDirectories: true)
    }

    @Test("copy up and back byte-equal, a second copy sends nothing, check, ls -R, stat, ranged cat, rcat, undo",
          .timeLimit(.minutes(3)), arguments: Self.servers)
    func firstDay(server: Server) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let folder = "stock-\(UUID().uuidString.prefix(8))"
        let environment = try configure(s, server, folder: folder)
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "r:\(folder)"], extraEnvironment: environment) }
        func run(_ arguments: [String], stdin: Data? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> GatewayRunner.Result {
            let result = try await s.runner.run(arguments, stdin: stdin, extraEnvironment: environment)
            #expect(result.status == 0, "\(arguments.joined(separator: " ")): \(result.stderr)", sourceLocation: sourceLocation)
            return result
        }
        try makeTree(s)
        let tree = "r:\(folder)/tree"
        _ = try await run(["copy", "src", tree])

        // Nothing to send the second time; where listings hide dot files, -v says once why they
        // are looked up one by one.
        let again = try await run(["copy", "-v", "src", tree])
        #expect(again.stderr.contains("copied 0 files"), "sent again: \(again.stderr)")
        let dotNotice = again.stderr.components(separatedBy: "leave out names starting with '.'").count - 1
        #expect(dotNotice == (server.listsDotFiles ? 0 : 1), "\(again.stderr)")
        _ = try await run(["check", "src", tree])

        _ = try await run(["copy", tree, "back"])
        let expected = try s.tree("src").filter { server.listsDotFiles || !$0.hasPrefix(".") }
        #expect(try s.tree("back") == expected)
        for item in expected where !item.hasSuffix("/") {
            #expect(try s.read("back/" + item) == s.read("src/" + item), "\(item) differs")
        }
        let listed = try await run(["ls", "-R", tree])
        let listedNames = Set(listed.text.split(separator: "\n").map(String.init))
        #expect(listedNames == Set(expected), "ls -R: \(listedNames.symmetricDifference(expected).sorted())")
        for name in Self.names { _ = try await run(["stat", "\(tree)/\(name)"]) }
        let ranged = try await run(["cat", "--offset", "1000", "--count", "10", "\(tree)/sub dir/nested;x/deep.bin"])
        #expect(ranged.stdout == (try s.read("src/sub dir/nested;x/deep.bin")).subdata(in: 1000..<1010))
        let piped = Data("piped; in\n".utf8)
        _ = try await run(["rcat", "\(tree)/r;c?d #e.txt"], stdin: piped)
        #expect(try await run(["cat", "\(tree)/r;c?d #e.txt"]).stdout == piped)

        // Undo an overwrite, a move and an rm -r.
        _ = try await run(["rcat", "\(tree)/a b.txt"], stdin: Data("overwritten\n".utf8))
        _ = try await run(["undo"])
        #expect(try await run(["cat", "\(tree)/a b.txt"]).stdout == (try s.read("src/a b.txt")))
        _ = try await run(["move", "\(tree)/semi;colon.txt", "\(tree)/sub dir/moved;here.txt"])
        _ = try await run(["undo"])
        #expect(try await run(["cat", "\(tree)/semi;colon.txt"]).stdout == (try s.read("src/semi;colon.txt")))
        _ = try await run(["rm", "-r", "\(tree)/sub dir"])
        #expect(try await s.runner.run(["stat", "\(tree)/sub dir"], extraEnvironment: environment).status == 1)
        _ = try await run(["undo"])
        _ = try await run(["copy", tree, "after-undo"])
        #expect(try s.tree("after-undo") == (expected + ["r;c?d #e.txt"]).sorted())
        #expect(try s.read("after-undo/sub dir/nested;x/deep.bin") == s.read("src/sub dir/nested;x/deep.bin"))
    }
}
