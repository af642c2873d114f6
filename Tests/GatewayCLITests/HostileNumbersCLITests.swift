import Foundation
@testable import GatewayTestSupport
import Testing

/// Issue 29 part 5: sizes near `Int64.max` from a server must never trap a command: not in a dry
/// run, a summary, a rate, a progress line, an ETA, a listing or a quota. Each command runs against
/// a stand-in whose folder holds files of hostile sizes, and must end with a status and a message.
@Suite("every command's summary with Int64.max-sized files")
struct HostileNumbersCLITests {
    /// Sizes a server may send: the largest, two that overflow when added, one past Int64, negative.
    static let sizes = ["9223372036854775807", "5000000000000000000", "5000000000000000000", "18446744073709551615", "-1"]

    static func server() throws -> ScriptedHTTPServer {
        try ScriptedHTTPServer { request in
            let path = request.path.hasSuffix("/") && request.path.count > 1 ? String(request.path.dropLast()) : request.path
            let depth = request.headers["depth"] ?? "infinity"
            switch request.method {
            case "PROPFIND":
                if path == "/" {
                    let quota = "<D:response><D:href>/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype>"
                        + "<D:quota-available-bytes>9223372036854775807</D:quota-available-bytes>"
                        + "<D:quota-used-bytes>9223372036854775807</D:quota-used-bytes></D:prop>"
                        + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
                    return .multistatus(quota + (depth == "0" ? "" : ScriptedReply.response(href: "/dir/", folder: true)))
                }
                if path == "/dir" {
                    let files = sizes.enumerated().map { ScriptedReply.response(href: "/dir/f\($0.offset).bin", size: $0.element) }.joined()
                    return .multistatus(ScriptedReply.response(href: "/dir/", folder: true) + (depth == "0" ? "" : files))
                }
                if path.hasPrefix("/dir/f"), let index = Int(path.dropFirst("/dir/f".count).prefix { $0.isNumber }), index < sizes.count {
                    return .multistatus(ScriptedReply.response(href: path, size: sizes[index]))
                }
                return .http("404 Not Found")
            case "GET":
                return .http("200 OK", body: "hello")
            case "OPTIONS":
                return .http("200 OK", headers: [("DAV", "1")])
            default:
                return .http("405 Method Not Allowed")
            }
        }
    }

    @Test("copy, sync and move (dry and real, with --progress and --json), check, ls, stat and about end without a trap")
    func noCommandTraps() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let server = try Self.server()
        defer { server.stop() }
        try s.write("config.json", Data(#"{"remotes": {"h": {"type": "webdav", "url": "http://127.0.0.1:\#(server.port)/"}}}"#.utf8))
        let environment = ["GATEWAY_CONFIG": s.path("config.json"), "GATEWAY_STATE_DIR": s.path("state")]
        let commands: [[String]] = [
            ["copy", "--dry-run", "h:dir", "out"], ["copy", "--dry-run", "--json", "-v", "h:dir", "out"],
            ["sync", "--dry-run", "h:dir", "out"], ["move", "--dry-run", "h:dir", "out"],
            ["copy", "--progress", "h:dir", "out"], ["copy", "--json", "h:dir", "out"], ["sync", "--progress", "h:dir", "out2"],
            ["check", "h:dir", "out"], ["check", "--json", "h:dir", "out"],
            ["ls", "-l", "h:dir"], ["ls", "-R", "--json", "h:dir"], ["ls", "-l", "-R", "h:"],
            ["stat", "h:dir/f0.bin"], ["stat", "--json", "h:dir/f3.bin"], ["about", "h:"], ["about", "--json", "h:"],
        ]
        for command in commands {
            let result = try await s.runner.run(command, extraEnvironment: environment)
            let name = command.joined(separator: " ")
            #expect([0, 1].contains(result.status), "\(name): exit \(result.status)\n\(result.stderr.suffix(2000))")
            #expect(!result.stderr.contains("Fatal error"), "\(name): \(result.stderr.suffix(2000))")
            #expect(!result.stderr.isEmpty || !result.stdout.isEmpty, "\(name) said nothing")
        }
    }
}
