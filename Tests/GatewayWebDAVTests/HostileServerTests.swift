import Foundation
@testable import GatewayTestSupport
import GatewayTransport
@testable import GatewayWebDAV
import StorageGateway
import Testing

/// Servers written to hurt: redirects to another origin, endless or cut-off multistatus bodies,
/// hostile sizes, echoed secrets, control characters, drips. Each answer comes from a
/// ``ScriptedHTTPServer``; every test states what the gateway must do instead of trusting it.
@Suite("WebDAV against hostile servers")
struct HostileServerTests {
    static let password = "Hostile-Pa55word-\(UUID().uuidString.prefix(6))"

    /// A provider for a scripted server, with Basic credentials (or a bearer token) and short time-outs.
    static func provider(_ server: ScriptedHTTPServer, bearer: Bool = false, configure: (inout HTTPClientConfiguration) -> Void = { _ in })
        -> WebDAVProvider {
        var configuration = HTTPClientConfiguration(baseURL: server.url("/dav/"), remoteName: "hostile",
                                                    user: bearer ? nil : "gateway", password: bearer ? nil : password,
                                                    bearerToken: bearer ? "Bearer-T0ken-\(password)" : nil,
                                                    connectTimeout: .seconds(5), idleTimeout: .seconds(10))
        configure(&configuration)
        return WebDAVProvider(configuration: configuration, atomicPut: .never)
    }

    /// Any error the call throws (the call must fail).
    static func failure(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async -> (any Error)? {
        do {
            try await body()
            Issue.record("expected a failure", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    @Test("a redirect to another port of the same host is not followed, and no credential goes there",
          arguments: [false, true])
    func redirectElsewhere(bearer: Bool) async throws {
        let elsewhere = try ScriptedHTTPServer { _ in .http("200 OK", body: "stolen") }
        defer { elsewhere.stop() }
        let target = "http://127.0.0.1:\(elsewhere.port)/dav/"
        let server = try ScriptedHTTPServer { request in
            // Basic credentials come only after a challenge: ask for them, so they are in play.
            guard request.headers["authorization"] != nil else {
                return .http("401 Unauthorized", headers: [("WWW-Authenticate", "Basic realm=\"dav\"")])
            }
            return .http("301 Moved Permanently", headers: [("Location", target + request.target.dropFirst("/dav/".count))])
        }
        defer { server.stop() }
        let provider = Self.provider(server, bearer: bearer)
        let listing = await Self.failure { _ = try await provider.contentsOfDirectory(path: "/folder").collectAll() }
        let reading = await Self.failure { _ = try await provider.contents(path: "/file.txt") }
        let stat = await Self.failure { _ = try await provider.attributesOfItem(path: "/file.txt") }
        for error in [listing, reading, stat].compactMap({ $0 }) {
            #expect(ErrorMessage.reason(for: error).contains("another origin"), "\(error)")
        }
        #expect(elsewhere.requests.isEmpty, "requests reached the other origin: \(elsewhere.requests.map(\.head))")
        // Credentials did go to the configured origin.
        #expect(server.requests.contains { $0.headers["authorization"] != nil })
    }

    @Test("a redirect on the same origin is followed (a folder asked for without its slash)")
    func redirectSameOrigin() async throws {
        let server = try ScriptedHTTPServer { request in
            switch request.target {
            case "/dav/folder":
                return .http("301 Moved Permanently", headers: [("Location", "/dav/folder/")])
            case "/dav/folder/":
                return .multistatus(ScriptedReply.response(href: "/dav/folder/", folder: true)
                                    + ScriptedReply.response(href: "/dav/folder/a.txt", size: "3"))
            default:
                return .http("404 Not Found")
            }
        }
        defer { server.stop() }
        let items = try await Self.provider(server).contentsOfDirectory(path: "/folder").collectAll()
        #expect(items.map(\.name) == ["a.txt"])
    }

    @Test("a stat answered with a whole listing (Depth ignored) finds the item and keeps two responses, not all")
    func depthIgnored() async throws {
        // 30,000 siblings first, the item itself last: what a server that ignores `Depth: 0` for
        // a file's parent-style answer, or a hostile one, sends.
        var responses = ScriptedReply.response(href: "/dav/", folder: true)
        for index in 0..<30_000 { responses += ScriptedReply.response(href: "/dav/sibling-\(index).txt", size: "1") }
        responses += ScriptedReply.response(href: "/dav/item.txt", size: "12345")
        let body = responses
        let server = try ScriptedHTTPServer { request in
            request.method == "PROPFIND" ? .multistatus(body) : .http("404 Not Found")
        }
        defer { server.stop() }
        let provider = Self.provider(server)
        let item = try await provider.attributesOfItem(path: "/item.txt")
        #expect(item.path == "/item.txt" && item.size == 12345)
        let kept = try await provider.describe("/item.txt", body: WebDAVProvider.propfindBody, folder: false)
        #expect(kept.count == 2, "the first response and the item's own, nothing else")
    }

    @Test("multistatus bodies that nest without end, hold endless elements or texts, or stop early fail clearly and quickly")
    func boundedMultistatus() async throws {
        let open = Array("<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>/dav/x</D:href>".utf8)
        let server = try ScriptedHTTPServer { request in
            let endless: ScriptedReply.Step
            switch request.target {
            case "/dav/deep/": endless = .repeating(chunk: Array(String(repeating: "<D:a>", count: 4096).utf8), interval: 0, total: 400 << 20, seconds: 20)
            case "/dav/wide/": endless = .repeating(chunk: Array(String(repeating: "<x:e xmlns:x=\"u\"/>", count: 2048).utf8), interval: 0,
                                                    total: 400 << 20, seconds: 20)
            case "/dav/names/": endless = .repeating(chunk: Array((0..<2048).map { "<n\($0 % 100_000)/>" }.joined().utf8), interval: 0,
                                                     total: 400 << 20, seconds: 20)
            case "/dav/text/": endless = .repeating(chunk: Array(repeating: UInt8(ascii: "a"), count: 65536), interval: 0, total: 400 << 20, seconds: 20)
            case "/dav/cut/": return ScriptedReply([.bytes(ScriptedReply.head("207 Multi-Status", headers: [("Content-Length", "\(open.count)")])), .bytes(open)])
            case "/dav/empty/": return .http("207 Multi-Status")
            case "/dav/html/": return .http("207 Multi-Status", body: "<html><body>hello</body></html>")
            default: return .http("404 Not Found")
            }
            let prefix: [UInt8] = request.target == "/dav/text/"
                ? Array("<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>".utf8) : open
            return ScriptedReply([.bytes(ScriptedReply.head("207 Multi-Status", headers: [("Transfer-Encoding", "chunked")])),
                                  .bytes(Array("\(String(prefix.count, radix: 16))\r\n".utf8) + prefix + Array("\r\n".utf8)),
                                  .repeating(chunk: [], interval: 0, total: 0, seconds: 0),
                                  Self.chunked(endless)])
        }
        defer { server.stop() }
        let provider = Self.provider(server)
        let expectations = ["deep": "nested more than", "wide": "more than 10000 elements", "names": "distinct element names",
                            "text": "more than 64 KiB", "cut": "ended before the document was complete", "empty": "was empty",
                            "html": "not a DAV:multistatus"]
        // The peak is measured from here (the kernel's high-water mark, reset): a body buffered
        // and freed again still counts.
        let baseline = try Self.resetPeakMegabytes()
        let clock = ContinuousClock()
        for (folder, expected) in expectations.sorted(by: { $0.key < $1.key }) {
            let start = clock.now
            let error = await Self.failure { _ = try await provider.contentsOfDirectory(path: "/" + folder).collectAll() }
            #expect(error?.failureKind == .malformedResponse, "\(folder): \(String(describing: error))")
            #expect(error.map { ErrorMessage.reason(for: $0).contains(expected) } == true, "\(folder): \(String(describing: error))")
            #expect(clock.now - start < .seconds(10), "\(folder) took \(clock.now - start)")
        }
        // Memory stayed bounded: the endless bodies (400 MB each) were cut off early, not buffered.
        let peak = try Self.megabytes("VmHWM")
        #expect(peak - baseline < 150, "the peak grew from \(baseline) MB to \(peak) MB")
    }

    /// A step sent as HTTP/1.1 chunks (each repetition one chunk).
    static func chunked(_ step: ScriptedReply.Step) -> ScriptedReply.Step {
        guard case .repeating(let chunk, let interval, let total, let seconds) = step else { return step }
        return .repeating(chunk: Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8),
                          interval: interval, total: total, seconds: seconds)
    }

    /// A figure of this process's memory (`VmRSS`, `VmHWM`) from /proc, in MB; throws when it
    /// cannot be read (a check that read 0 would pass without checking).
    static func megabytes(_ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else {
            throw TestSetupError("no \(field) in /proc/self/status")
        }
        return kilobytes / 1024
    }

    /// Resets this process's peak resident memory to what it holds now (`clear_refs` 5, Linux
    /// 4.0 and later) and returns that, in MB.
    static func resetPeakMegabytes() throws -> Int {
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        return try megabytes("VmRSS")
    }

    @Test("hostile sizes: negative and overflowing lengths are unknown, sums past Int64.max never trap")
    func hostileSizes() async throws {
        let max = String(Int64.max)
        let server = try ScriptedHTTPServer { request in
            switch (request.method, request.target) {
            case ("PROPFIND", "/dav/"), ("PROPFIND", "/dav"):
                return .multistatus(ScriptedReply.response(href: "/dav/", folder: true)
                                    + ScriptedReply.response(href: "/dav/negative", size: "-5")
                                    + ScriptedReply.response(href: "/dav/huge", size: "99999999999999999999999")
                                    + ScriptedReply.response(href: "/dav/max1", size: max)
                                    + ScriptedReply.response(href: "/dav/max2", size: max))
            case ("GET", "/dav/negative"):
                return ScriptedReply([.bytes(ScriptedReply.head("200 OK", headers: [("Content-Length", "-5")])), .bytes(Array("abc".utf8)), .close])
            case ("GET", _):
                return .http("200 OK", body: "abc")
            default:
                return .http("404 Not Found")
            }
        }
        defer { server.stop() }
        let provider = Self.provider(server)
        let items = Dictionary(uniqueKeysWithValues: try await provider.contentsOfDirectory(path: "/").collectAll().map { ($0.name, $0) })
        #expect(items["negative"]?.size == nil)
        #expect(items["huge"]?.size == nil)
        #expect(items["max1"]?.size == Int64.max)
        // A dry-run copy adds the sizes: held at Int64.max instead of trapping.
        let destination = try LocalFileProvider(name: "dst", root: NSTemporaryDirectory())
        for mode in [CopyMode.copy, .sync] {
            let summary = try await CopyEngine(options: CopyOptions(dryRun: true)).run(
                mode, from: TransferEndpoint(provider: provider, path: "/"),
                to: TransferEndpoint(provider: destination, path: "/hostile-\(UUID().uuidString)"))
            #expect(summary.bytes == Int64.max)
        }
        // A body announced with a negative length is a clear error (libcurl refuses it), not a crash.
        let negative = await Self.failure { _ = try await provider.contents(path: "/negative") }
        #expect(negative.map { ErrorMessage.reason(for: $0) } == "bad server response")
        // A range whose end passes Int64.max reads to the end instead of trapping.
        // (This server ignores ranges: the client skips and cuts.)
        #expect(try await provider.contents(path: "/max1", offset: 1, length: Int64.max) == Data("bc".utf8))
        #expect(try await provider.contents(path: "/max1", offset: .max, length: .max) == Data())
    }

    @Test("a listing that gives a member an error status fails naming it; a 404 member (gone since) is left out")
    func memberWithErrorStatus() async throws {
        let server = try ScriptedHTTPServer { request in
            guard request.method == "PROPFIND" else { return .http("405 Method Not Allowed") }
            let members = ScriptedReply.response(href: "/dav/f/", folder: true) + ScriptedReply.response(href: "/dav/f/a.txt", size: "1")
                + "<D:response><D:href>/dav/f/gone.txt</D:href><D:status>HTTP/1.1 404 Not Found</D:status></D:response>"
            if request.target.hasPrefix("/dav/ok") {
                return .multistatus(members.replacingOccurrences(of: "/dav/f/", with: "/dav/ok/"))
            }
            return .multistatus(members + "<D:response><D:href>/dav/f/secret.txt</D:href><D:status>HTTP/1.1 403 Forbidden</D:status></D:response>")
        }
        defer { server.stop() }
        let provider = Self.provider(server)
        #expect(try await provider.contentsOfDirectory(path: "/ok").collectAll().map(\.name) == ["a.txt"])
        let listing = await Self.failure { _ = try await provider.contentsOfDirectory(path: "/f").collectAll() }
        let text = listing.map { ErrorMessage.reason(for: $0) } ?? ""
        #expect(text.contains("/f/secret.txt as 403"), "\(text)")
        let walk = await Self.failure { for try await _ in provider.walk(path: "/f") {} }
        #expect((walk.map { ErrorMessage.reason(for: $0) } ?? "").contains("/f/secret.txt as 403"))
    }

    @Test("DELETE answered 207 names every member that failed; 409 to DELETE is not worded as a missing parent")
    func deleteMultistatus() async throws {
        let server = try ScriptedHTTPServer { request in
            switch (request.method, request.target) {
            case ("PROPFIND", let target):
                // A delete looks the item up first: tree and many are folders (deleted as "name/").
                let folder = !target.hasPrefix("/dav/conflict")
                let href = folder && !target.hasSuffix("/") ? target + "/" : target
                return .multistatus(ScriptedReply.response(href: href, size: folder ? nil : "1", folder: folder))
            case ("DELETE", "/dav/tree/"):
                let failed = ["a.txt": "423 Locked", "sub/b.txt": "403 Forbidden"].map { name, status in
                    "<D:response><D:href>/dav/tree/\(name)</D:href><D:status>HTTP/1.1 \(status)</D:status></D:response>"
                }.joined()
                return .multistatus(failed)
            case ("DELETE", "/dav/many/"):
                return .multistatus((0..<12).map { "<D:response><D:href>/dav/many/f\($0)</D:href><D:status>HTTP/1.1 423 Locked</D:status></D:response>" }.joined())
            case ("DELETE", "/dav/conflict"):
                return .http("409 Conflict", body: "<html><title>409 Conflict</title></html>")
            default:
                return .http("404 Not Found")
            }
        }
        defer { server.stop() }
        let provider = Self.provider(server)
        let tree = await Self.failure { try await provider.removeItem(path: "/tree", recursive: true) }
        let text = tree.map { ErrorMessage.reason(for: $0) } ?? ""
        #expect(text.contains("/tree/a.txt (423 locked)") && text.contains("/tree/sub/b.txt (403 permission denied)"), "\(text)")
        #expect(server.requests.filter { $0.method == "DELETE" }.count == 1, "one DELETE for the whole tree")
        // Many failures: the first ten named, the rest counted.
        let many = await Self.failure { try await provider.removeItem(path: "/many", recursive: true) }
        let manyText = many.map { ErrorMessage.reason(for: $0) } ?? ""
        #expect(manyText.contains("12 items failed") && manyText.contains("/many/f9 (423 locked)") && !manyText.contains("/many/f10 ")
                && manyText.contains("and 2 more"), "\(manyText)")
        let conflict = await Self.failure { try await provider.removeItem(path: "/conflict", recursive: true) }
        let conflictText = conflict.map { ErrorMessage.reason(for: $0) } ?? ""
        #expect(conflictText.contains("409 conflict") && !conflictText.contains("missing parent"), "\(conflictText)")
    }

    @Test("secrets a server echoes back and control characters in its text never reach a message")
    func echoedSecretsAndControlCharacters() async throws {
        let server = try ScriptedHTTPServer { request in
            // A 500 page echoing the request head (as some debug pages do), with a terminal escape.
            .http("500 Internal Server Error", body: "<html><body>\u{1B}]0;pwned\u{07}\u{1B}[2J request was:\n\(request.head)</body></html>")
        }
        defer { server.stop() }
        for bearer in [false, true] {
            let provider = Self.provider(server, bearer: bearer)
            let error = await Self.failure { _ = try await provider.contents(path: "/x") }
            let text = error.map { ErrorMessage.reason(for: $0) } ?? ""
            let basic = Data("gateway:\(Self.password)".utf8).base64EncodedString()
            #expect(text.contains("500"))
            #expect(!text.contains(Self.password) && !text.contains(basic), "\(text)")
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control characters in \(text.debugDescription)")
            #expect(text.contains("\\e]0;pwned\\a"), "\(text)")
        }
        #expect(server.requests.contains { $0.head.contains(Self.password) || $0.headers["authorization"] != nil })
    }

    @Test("thousands of header names are all kept, the ones after them too; past 256 KiB of headers a read fails clearly")
    func manyHeaders() async throws {
        let body = Array("the body, whole".utf8)
        let server = try ScriptedHTTPServer { request in
            if request.target == "/dav/many" {
                // Content-Length last: were it dropped, the read would wait for the connection to close.
                let junk = (0..<3_000).map { ("X-Amz-Meta-Key\($0)", "v\($0)") }
                return ScriptedReply([.bytes(ScriptedReply.head("200 OK", headers: junk + [("Content-Length", "\(body.count)")]) + body)])
            }
            // 270 lines of 1,000 bytes: past the gateway's 256 KiB, within libcurl's 300 KiB.
            let filler = String(repeating: "f", count: 1_000)
            let heavy = (0..<270).map { ("X-Fill-\($0)", filler) }
            return ScriptedReply([.bytes(ScriptedReply.head("200 OK", headers: heavy + [("Content-Length", "\(body.count)")]) + body)])
        }
        defer { server.stop() }
        let provider = Self.provider(server)
        #expect(try await provider.contents(path: "/many") == Data(body))
        let error = await Self.failure { _ = try await provider.contents(path: "/heavy") }
        let text = error.map { ErrorMessage.reason(for: $0) } ?? ""
        #expect(error?.failureKind == .malformedResponse && text.contains("more than 256 KiB of response headers"), "\(text)")
    }

    @Test("a body dripped slower than low_speed_limit fails as timed out; a quiet one by idle_timeout")
    func drips() async throws {
        let server = try ScriptedHTTPServer { request in
            let head = ScriptedReply.head("200 OK", headers: [("Content-Length", "100000")])
            if request.target == "/dav/quiet" {
                return ScriptedReply([.bytes(head), .bytes(Array(repeating: 0x61, count: 10)), .pause(8), .close])
            }
            return ScriptedReply([.bytes(head), .repeating(chunk: [0x61], interval: 0.2, total: 100_000, seconds: 12), .close])
        }
        defer { server.stop() }
        let provider = Self.provider(server) { configuration in
            configuration.timeouts.lowSpeedLimit = 100
            configuration.timeouts.lowSpeedTime = .seconds(2)
            configuration.idleTimeout = .seconds(3)
        }
        let clock = ContinuousClock()
        for (path, bound) in [("/drip", Duration.seconds(6)), ("/quiet", .seconds(6))] {
            let start = clock.now
            let error = await Self.failure { _ = try await provider.contents(path: path) }
            #expect(error?.failureKind == .timedOut, "\(path): \(String(describing: error))")
            #expect(clock.now - start < bound, "\(path) took \(clock.now - start)")
        }
    }

    @Test("a listing asks only for what a listing needs; stat asks for more")
    func listingProperties() async throws {
        let server = try ScriptedHTTPServer { _ in .multistatus(ScriptedReply.response(href: "/dav/", folder: true)) }
        defer { server.stop() }
        let provider = Self.provider(server)
        _ = try await provider.contentsOfDirectory(path: "/").collectAll()
        _ = try await provider.attributesOfItem(path: "/")
        let bodies = server.requests.filter { $0.method == "PROPFIND" }.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(bodies.count == 2)
        #expect(bodies.first.map { $0.contains("getetag") && !$0.contains("getcontenttype") && !$0.contains("creationdate") } == true)
        #expect(bodies.last.map { $0.contains("getcontenttype") && $0.contains("creationdate") } == true)
    }

    @Test("reserved characters in names are percent-encoded: a server that cuts paths at ';' (as servlet containers do) stores the whole name")
    func reservedCharacters() async throws {
        let stored = Locked<[String]>([])
        let server = try ScriptedHTTPServer { request in
            // The path a servlet container sees: the raw target cut at the first ';', then decoded.
            let path = (request.target.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "")
                .removingPercentEncoding ?? ""
            if request.method == "PUT" { stored.mutate { $0.append(path) } }
            return .http(request.method == "PUT" ? "201 Created" : "204 No Content")
        }
        defer { server.stop() }
        let provider = Self.provider(server) { $0.user = nil; $0.password = nil }
        var options = WriteOptions(atomically: false)
        options.returnsStoredAttributes = false
        let names = ["a&b;c.txt", "semi;colon", "q?x#y", "eq=1,2+3 $@!'()*.txt", "percent%3B.txt"]
        for name in names {
            _ = try await provider.write(path: "/" + name, from: ByteStream(data: Data("x".utf8)), options: options)
        }
        #expect(stored.value == names.map { "/dav/" + $0 })
        let targets = server.requests.filter { $0.method == "PUT" }.map(\.target)
        #expect(!targets.contains { $0.contains(";") || $0.contains("&") || $0.contains("+") }, "\(targets)")
    }

    @Test("a 206 whose Content-Range is not the part asked for: an earlier start is cut to size, anything else fails, never bytes at the wrong offset")
    func wrongContentRange() async throws {
        let file = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let mode = Locked("earlier")
        let server = try ScriptedHTTPServer { request in
            guard request.method == "GET" else { return .http("405 Method Not Allowed") }
            switch mode.value {
            case "earlier":
                // The whole file, as if the range began at 0.
                return .http("206 Partial Content", headers: [("Content-Range", "bytes 0-999/1000")], body: file)
            case "later":
                return .http("206 Partial Content", headers: [("Content-Range", "bytes 500-999/1000")], body: Array(file[500...]))
            default:
                return .http("206 Partial Content", body: file)
            }
        }
        defer { server.stop() }
        let provider = Self.provider(server)
        let cut = try await provider.contents(path: "/file.bin", offset: 100, length: 10)
        #expect(cut == Data(file[100..<110]))
        mode.mutate { $0 = "later" }
        let later = await Self.failure { _ = try await provider.contents(path: "/file.bin", offset: 100, length: 10) }
        #expect(later.map { ErrorMessage.reason(for: $0) }?.contains("Content-Range") == true, "\(String(describing: later))")
        mode.mutate { $0 = "missing" }
        let missing = await Self.failure { _ = try await provider.contents(path: "/file.bin", offset: 100, length: 10) }
        #expect(missing.map { ErrorMessage.reason(for: $0) }?.contains("Content-Range missing") == true, "\(String(describing: missing))")
        #expect(ContentRange("bytes 5-9/10") == ContentRange("bytes 5-9/*"))
        #expect(ContentRange("bytes 5-9/10")?.first == 5 && ContentRange("bytes 5-9/10")?.last == 9)
        #expect(ContentRange("bytes -5-9/10") == nil && ContentRange("items 1-2/3") == nil && ContentRange("bytes 99999999999999999999-1/2") == nil)
    }
}
