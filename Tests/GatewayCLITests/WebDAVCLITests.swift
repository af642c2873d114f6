import Foundation
@testable import GatewayTestSupport
import Testing

/// `gateway` against the WebDAV test servers: round trips, errors, and secrets kept out of output.
@Suite("gateway CLI with WebDAV remotes")
struct WebDAVCLITests {
    /// Writes a config with remotes `apache` and `rclone`; the password comes from the environment.
    func configure(_ s: CLIScratch) async throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment
        guard let apache = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"], let rclone = environment["GATEWAY_TEST_WEBDAV_RCLONE_URL"] else {
            throw CLITestSetupError("GATEWAY_TEST_WEBDAV_*_URL not set: run ./scripts/test.sh (it starts the WebDAV servers)")
        }
        let user = environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway"
        let config = """
        {"remotes": {
          "apache": {"type": "webdav", "url": "\(apache)", "user": "\(user)", "password_env": "DAV_SECRET"},
          "rclone": {"type": "webdav", "url": "\(rclone)", "user": "\(user)", "password_env": "DAV_SECRET"}
        }}
        """
        try s.write("config.json", Data(config.utf8))
        return ["GATEWAY_CONFIG": s.path("config.json"), "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test"]
    }

    func makeTree(_ s: CLIScratch) async throws {
        let names = ["a b.txt", "naïve café.txt", "#hash", "100%", "what?.txt", ".hidden", "x:y", "🚀", "semi;colon&amp"]
        for (index, name) in names.enumerated() { try s.write("src/\(name)", Data("file \(index)\n".utf8)) }
        try s.write("src/sub dir/nested/deep.bin", Data((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        try s.write("src/sub dir/zero", Data())
        try FileManager.default.createDirectory(atPath: s.path("src/empty folder/also empty"), withIntermediateDirectories: true)
    }

    @Test("local -> WebDAV (Apache) -> WebDAV (rclone) -> local round trip is byte-equal", .timeLimit(.minutes(2)))
    func roundTrip() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try await configure(s)
        try await makeTree(s)
        let folder = "rt-\(UUID().uuidString.prefix(8))"
        defer {
            _ = try? s.runner.runBlocking(["rm", "-r", "apache:\(folder)"], extraEnvironment: environment)
            _ = try? s.runner.runBlocking(["rm", "-r", "rclone:\(folder)"], extraEnvironment: environment)
        }
        for (from, to) in [("src", "apache:\(folder)"), ("apache:\(folder)", "rclone:\(folder)"), ("rclone:\(folder)", "back")] {
            let result = try await s.runner.run(["copy", from, to], extraEnvironment: environment)
            #expect(result.status == 0, "copy \(from) \(to): \(result.stderr)")
        }
        #expect(try s.tree("back") == s.tree("src"))
        for item in try s.tree("src") where !item.hasSuffix("/") {
            #expect(try s.read("back/" + item) == s.read("src/" + item), "\(item) differs")
        }
        let listing = try await s.runner.run(["ls", "--json", "-R", "apache:\(folder)"], extraEnvironment: environment)
        let entries = try #require(try JSONSerialization.jsonObject(with: listing.stdout) as? [[String: Any]])
        #expect(entries.contains { $0["path"] as? String == "sub dir/nested/deep.bin" && $0["size"] as? Int == 1_500_000 })
        let ranged = try await s.runner.run(["cat", "--offset", "1000", "--count", "10", "apache:\(folder)/sub dir/nested/deep.bin"], extraEnvironment: environment)
        #expect(ranged.stdout == (try s.read("src/sub dir/nested/deep.bin")).subdata(in: 1000..<1010))
    }

    @Test("wrong password: exit 1, one clear line, the password printed nowhere (not even with --verbose)")
    func wrongPassword() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        var environment = try await configure(s)
        environment["DAV_SECRET"] = "Not-The-Password-917"
        let result = try await s.runner.run(["--verbose", "ls", "apache:"], extraEnvironment: environment)
        #expect(result.status == 1)
        #expect(result.stderr.contains("gateway: ls apache:: HTTP 401 not authenticated"))
        #expect(!result.stderr.contains("Not-The-Password-917"))
        #expect(!result.text.contains("Not-The-Password-917"))
    }

    @Test("about on a server without RFC 4331 quota: one line, exit 1")
    func aboutWithoutQuota() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try await configure(s)
        let result = try await s.runner.run(["about", "apache:"], extraEnvironment: environment)
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("quota"))
    }

    @Test("an unset password_env variable is a config error (exit 2)")
    func missingSecret() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        var environment = try await configure(s)
        environment.removeValue(forKey: "DAV_SECRET")
        let result = try await s.runner.run(["ls", "apache:"], extraEnvironment: environment)
        #expect(result.status == 2)
        #expect(result.stderr.contains("DAV_SECRET, which is not set"))
    }
}

struct CLITestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
