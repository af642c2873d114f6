import Crypto
import Foundation
import Synchronization
@testable import GatewayS3
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// The S3 backend against scripted servers that break the protocol in ways real ones might: a
/// listing that never advances, a range answer longer than the range, a `HEAD` without a length,
/// and a slow server that keeps requests waiting for a connection.
@Suite("S3 hostile servers")
struct S3HostileServerTests {
    func provider(_ server: ScriptedHTTPServer, maxConnections: Int = 4, requestAttempts: Int = 1) -> S3Provider {
        let configuration = S3Configuration(
            endpoint: server.url(), region: "us-east-1", bucket: "b", pathStyle: true,
            credentials: S3Credentials(accessKeyID: "hostile-key", secretAccessKey: "hostile-secret-4f9c2a"),
            http: HTTPClientConfiguration(baseURL: server.url(), remoteName: "hostile", maxConnections: maxConnections,
                                          connectTimeout: .seconds(5), idleTimeout: .seconds(10), requestAttempts: requestAttempts))
        return S3Provider(configuration: configuration, stateDirectory: FileManager.default.temporaryDirectory
            .appendingPathComponent("gateway-test-s3-hostile-\(UUID().uuidString)"))
    }

    static func listing(token: String?, keys: [String]) -> ScriptedReply {
        var xml = #"<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">"#
        xml += "<Name>b</Name><MaxKeys>1000</MaxKeys><IsTruncated>\(token == nil ? "false" : "true")</IsTruncated>"
        if let token { xml += "<NextContinuationToken>\(token)</NextContinuationToken>" }
        for key in keys {
            let escaped = key.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;")
            xml += "<Contents><Key>\(escaped)</Key><Size>1</Size><ETag>\"0cc175b9c0f1b6a831c399e269772661\"</ETag>"
            xml += "<LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents>"
        }
        xml += "</ListBucketResult>"
        return .http("200 OK", headers: [("Content-Type", "application/xml")], body: xml)
    }

    @Test("a plan's range objects: only names the gateway makes count; a gap or a short set is never joined; part rules decide server-side joins")
    func rangeObjects() async throws {
        let stem = "d/.big.bin.gateway-resume-k1-r"
        let server = try ScriptedHTTPServer { request in
            if request.method == "HEAD" { return .http("404 Not Found") }  // no file joined yet
            guard request.target.contains("list-type=2") else { return .http("500 Internal Server Error") }
            // Ranges at 0 and 10 (1 byte each, as the listing says), and names that only look like
            // ranges (or whose end would be past Int64.max).
            return Self.listing(token: nil, keys: [stem + "0.partial", stem + "10.partial", stem + "+5.partial", stem + "05.partial",
                                                   stem + "99999999999999999999.partial", stem + "9223372036854775807.partial",
                                                   stem + "3.partial.x", stem + ".partial",
                                                   "d/.big.bin.gateway-resume-k1.partial"])
        }
        defer { server.stop() }
        let s3 = provider(server)
        let ranges = try await s3.rangeObjects(of: "/d/big.bin", key: "k1")
        #expect(ranges.map(\.offset) == [0, 10] && ranges.map(\.path) == ["/" + stem + "0.partial", "/" + stem + "10.partial"])
        #expect(try await s3.rangedWriteSize(path: "/d/big.bin", key: "k1") == 11)
        do {
            _ = try await s3.commitRanges(path: "/d/big.bin", key: "k1", size: 11, options: WriteOptions())
            Issue.record("ranges with a gap (bytes 1 to 9) were joined")
        } catch {
            guard case .truncated(_, let reason)? = error as? FileProviderError else { Issue.record("\(error)"); return }
            #expect(reason.contains("at byte 1"), "\(reason)")
        }
        #expect(TemporaryName(String(S3Provider.rangeObjectPath(of: "/d/big.bin", key: "k1", offset: 7).split(separator: "/").last!))?.kind == .resumable)

        func range(_ offset: Int64, _ size: Int64) -> S3Provider.RangeObject {
            S3Provider.RangeObject(path: "/r\(offset)", offset: offset, size: size, etag: nil)
        }
        let mib: Int64 = 1 << 20, gib: Int64 = 1 << 30
        // Every part but the last at least 5 MiB: a 4 MiB range first can't be joined on the server.
        #expect(s3.joinParts(of: [range(0, 6 * mib), range(6 * mib, 1)])?.count == 2)
        #expect(s3.joinParts(of: [range(0, 4 * mib), range(4 * mib, 6 * mib)]) == nil)
        // Over 5 GiB, a range is copied in equal pieces of at most 5 GiB, covering it exactly.
        let pieces = try #require(s3.joinParts(of: [range(0, 12 * gib + 3), range(12 * gib + 3, 5 * mib)]))
        #expect(pieces.count == 4 && pieces.prefix(3).allSatisfy { $0.end - $0.start + 1 <= 5 * gib && $0.sourceKey == "r0" })
        #expect(pieces.prefix(3).reduce(Int64(0)) { $0 + $1.end - $1.start + 1 } == 12 * gib + 3 && pieces[0].start == 0 && pieces[2].end == 12 * gib + 2)
    }

    @Test("a truncated listing that gives the same token again fails as malformed, never lists forever")
    func stuckListing() async throws {
        let server = try ScriptedHTTPServer { request in
            if request.method == "HEAD" { return .http("404 Not Found") }
            if request.method == "DELETE" { return .http("204 No Content") }
            if request.method == "POST" { return .http("200 OK", body: "<DeleteResult></DeleteResult>") }
            guard request.target.contains("list-type=2") else { return .http("500 Internal Server Error") }
            // Every page says "more", with the same token each time.
            return Self.listing(token: "stuck", keys: ["d/x\(request.target.count)"])
        }
        defer { server.stop() }
        let s3 = provider(server)
        await expectFailure(.malformedResponse) { _ = try await s3.contentsOfDirectory(path: "/d").collectAll() }
        await expectFailure(.malformedResponse) { for try await _ in s3.walk(path: "/d") {} }
        await expectFailure(.malformedResponse) { try await s3.removeItem(path: "/d", recursive: true) }
        // Two pages per attempt (the second repeats the first's token), a few attempts: bounded.
        let listings = server.requests.filter { $0.target.contains("list-type=2") }.count
        #expect(listings <= 8, "\(listings) listing requests")
    }

    @Test("a truncated listing without any token fails as malformed instead of starting over")
    func listingWithoutToken() async throws {
        let server = try ScriptedHTTPServer { request in
            var xml = #"<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><IsTruncated>true</IsTruncated>"#
            xml += "<Contents><Key>d/x</Key><Size>1</Size></Contents></ListBucketResult>"
            return request.method == "HEAD" ? .http("404 Not Found") : .http("200 OK", body: xml)
        }
        defer { server.stop() }
        let s3 = provider(server)
        await expectFailure(.malformedResponse) { for try await _ in s3.walk(path: "/") {} }
        #expect(server.requests.count <= 2, "\(server.requests.count) requests")
    }

    @Test("a 206 answer longer than the range asked for is cut to the range")
    func longPartialAnswer() async throws {
        let body = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)
        let server = try ScriptedHTTPServer { request in
            // Claims bytes 4-7, sends 32 from there.
            .http("206 Partial Content", headers: [("Content-Range", "bytes 4-7/36"), ("ETag", "\"e\"")], body: Array(body[4...]))
        }
        defer { server.stop() }
        let data = try await provider(server).contents(path: "/f", offset: 4, length: 4)
        #expect(data == Data("4567".utf8))
        #expect(server.requests.first { $0.method == "GET" }?.headers["range"] == "bytes=4-7")
    }

    @Test("a HEAD without Content-Length gives an unknown size, not zero")
    func headWithoutLength() async throws {
        let server = try ScriptedHTTPServer { _ in
            ScriptedReply([.bytes(ScriptedReply.head("200 OK", headers: [("ETag", "\"e\""), ("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT")]))])
        }
        defer { server.stop() }
        let item = try await provider(server).attributesOfItem(path: "/f")
        #expect(item.type == .file)
        #expect(item.size == nil)
    }

    @Test("a request that waits for a connection is signed when it is sent, not when it was made")
    func signedWhenSent() async throws {
        let server = try ScriptedHTTPServer { request in
            if request.target.contains("slow") {
                return ScriptedReply([.pause(2.5)] + ScriptedReply.http("200 OK", headers: [("ETag", "\"e\"")]).steps)
            }
            return .http("200 OK", headers: [("ETag", "\"e\"")])
        }
        defer { server.stop() }
        let s3 = provider(server, maxConnections: 1)
        let slow = Task { try await s3.attributesOfItem(path: "/slow") }
        try await waitUntil("the slow request reached the server") { server.requests.contains { $0.target.contains("slow") } }
        // Made now, sent after the slow request frees the only connection (2.5 s after it arrived).
        let made = Date()
        _ = try await s3.attributesOfItem(path: "/fast")
        _ = try await slow.value
        let fast = try #require(server.requests.first { $0.target.contains("fast") })
        let stamp = try #require(fast.headers["x-amz-date"])
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let signed = try #require(formatter.date(from: stamp))
        #expect(signed.timeIntervalSince(made) >= 1, "signed at \(stamp), made at \(made)")
        #expect(fast.headers["authorization"]?.contains("Signature=") == true)
    }

    @Test("a folder's keys are deleted 1,000 a request; a server without DeleteObjects gets one DELETE per key")
    func batchDeletes() async throws {
        for supported in [true, false] {
            let server = try ScriptedHTTPServer { request in
                switch request.method {
                case "HEAD": return .http("404 Not Found")
                case "GET": return Self.listing(token: nil, keys: ["d/", "d/a", "d/b", "d/c&<x>"])
                case "POST": return supported ? .http("200 OK", body: "<DeleteResult></DeleteResult>") : .http("501 Not Implemented")
                default: return .http("204 No Content")
                }
            }
            defer { server.stop() }
            let s3 = provider(server)
            try await s3.removeItem(path: "/d", recursive: true)
            let posts = server.requests.filter { $0.method == "POST" }
            #expect(posts.count == 1)
            let post = try #require(posts.first)
            #expect(post.target.hasSuffix("?delete="))
            let xml = String(decoding: post.body, as: UTF8.self)
            for key in ["d/", "d/a", "d/b", "d/c&amp;&lt;x&gt;"] { #expect(xml.contains("<Key>\(key)</Key>"), "\(xml)") }
            #expect(post.headers["content-md5"] == Data(Insecure.MD5.hash(data: post.body)).base64EncodedString())
            let deletes = server.requests.filter { $0.method == "DELETE" }.map(\.target).sorted()
            #expect(deletes == (supported ? [] : ["/b/d/", "/b/d/a", "/b/d/b", "/b/d/c%26%3Cx%3E"]), "\(deletes)")
        }
    }

    @Test("a key DeleteObjects could not delete fails the removal, naming it; one already gone does not")
    func batchDeleteErrors() async throws {
        for code in ["AccessDenied", "NoSuchKey"] {
            let server = try ScriptedHTTPServer { request in
                switch request.method {
                case "HEAD": return .http("404 Not Found")
                case "GET": return Self.listing(token: nil, keys: ["d/a", "d/b"])
                default:
                    return .http("200 OK", body: "<DeleteResult><Error><Key>d/b</Key><Code>\(code)</Code><Message>no</Message></Error></DeleteResult>")
                }
            }
            defer { server.stop() }
            let s3 = provider(server)
            if code == "NoSuchKey" {
                try await s3.removeItem(path: "/d", recursive: true)
            } else {
                do {
                    try await s3.removeItem(path: "/d", recursive: true)
                    Issue.record("a refused delete was reported as done")
                } catch {
                    #expect(error.failureKind == .permissionDenied, "\(error)")
                    #expect((error as? FileProviderHTTPError)?.path == "/d/b", "\(error)")
                }
            }
        }
    }

    @Test("a 500 InternalError to a copy is asked again (S3 says to retry it), up to the request attempts")
    func internalErrorRetried() async throws {
        for failures in [1, 5] {
            let copies = Mutex(0)
            let server = try ScriptedHTTPServer { request in
                if request.method == "HEAD" {
                    guard request.target == "/b/src" else { return .http("404 Not Found") }
                    return ScriptedReply([.bytes(ScriptedReply.head("200 OK", headers: [
                        ("Content-Length", "3"), ("ETag", "\"e\""), ("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT"),
                    ]))])
                }
                if request.method == "GET" { return Self.listing(token: nil, keys: []) }
                guard request.method == "PUT", request.headers["x-amz-copy-source"] != nil else {
                    return .http("400 Bad Request", body: "<Error><Code>Unexpected</Code><Message>\(request.method) \(request.target)</Message></Error>")
                }
                let attempt = copies.withLock { count in count += 1; return count }
                if attempt <= failures {
                    return .http("500 Internal Server Error", headers: [("Content-Type", "application/xml")],
                                 body: "<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>")
                }
                return .http("200 OK", headers: [("Content-Type", "application/xml")],
                             body: "<CopyObjectResult><ETag>\"e\"</ETag><LastModified>2026-01-01T00:00:00.000Z</LastModified></CopyObjectResult>")
            }
            defer { server.stop() }
            let s3 = provider(server, requestAttempts: 3)
            if failures < 3 {
                try await s3.copyItem(path: "/src", to: "/dst", overwrite: false, progress: nil)
                #expect(copies.withLock { $0 } == failures + 1)
            } else {
                // Still failing after the attempts: the error is the server's, marked transient for the layers above.
                do {
                    try await s3.copyItem(path: "/src", to: "/dst", overwrite: false, progress: nil)
                    Issue.record("a copy the server never made was reported as done")
                } catch let error as FileProviderHTTPError {
                    #expect(error.statusCode == 500)
                    #expect(error.isTransient)
                }
                #expect(copies.withLock { $0 } == 3)
            }
        }
    }

    @Test("emptying the trash removes the delete markers of keys with nothing else left, never one that hides a version; keys out of order remove nothing")
    func loneDeleteMarkers() async throws {
        func entry(_ key: String, _ version: String, marker: Bool) -> String {
            marker ? "<DeleteMarker><Key>\(key)</Key><VersionId>\(version)</VersionId><IsLatest>true</IsLatest></DeleteMarker>"
                : "<Version><Key>\(key)</Key><VersionId>\(version)</VersionId><IsLatest>false</IsLatest><Size>1</Size></Version>"
        }
        let ordered = [entry("d/a", "ma", marker: true), entry("d/a", "va", marker: false), entry("d/b", "mb1", marker: true),
                       entry("d/b", "mb2", marker: true), entry("d/c", "vc", marker: false)]
        let backwards = [entry("d/b", "mb1", marker: true), entry("d/a", "ma", marker: true)]
        // (The third: a server without DeleteObjects gets one DELETE ?versionId= per marker.)
        for (listing, expected, batches) in [(ordered, ["mb1", "mb2"], true), (backwards, [], true), (ordered, ["mb1", "mb2"], false)] {
            let server = try ScriptedHTTPServer { request in
                switch request.method {
                case "DELETE": return .http("204 No Content")
                case "POST" where !batches: return .http("501 Not Implemented")
                case "POST": return .http("200 OK", headers: [("Content-Type", "application/xml")], body: "<DeleteResult></DeleteResult>")
                default:
                    return .http("200 OK", headers: [("Content-Type", "application/xml")],
                                 body: "<ListVersionsResult><IsTruncated>false</IsTruncated>" + listing.joined() + "</ListVersionsResult>")
                }
            }
            defer { server.stop() }
            let s3 = provider(server)
            do {
                let removed = try await s3.removeLoneDeleteMarkers(below: "d/", exactKey: false, path: "/d")
                #expect(removed == expected.count && !expected.isEmpty)
            } catch {
                #expect(expected.isEmpty && error.failureKind == .malformedResponse, "\(error)")
            }
            // One DeleteObjects naming d/b's two markers by version, nothing else.
            let posts = server.requests.filter { $0.method == "POST" }
            #expect(posts.count == (expected.isEmpty ? 0 : 1) && posts.allSatisfy { $0.target.hasSuffix("?delete=") })
            let xml = posts.map { String(decoding: $0.body, as: UTF8.self) }.joined()
            let named = xml.components(separatedBy: "<VersionId>").dropFirst().compactMap { $0.components(separatedBy: "</VersionId>").first }.sorted()
            #expect(named == expected, "\(xml)")
            #expect(expected.allSatisfy { xml.contains("<Object><Key>d/b</Key><VersionId>\($0)</VersionId></Object>") }, "\(xml)")
            let deletes = server.requests.filter { $0.method == "DELETE" }.map(\.target).sorted()
            #expect(deletes == (batches ? [] : expected.map { "/b/d/b?versionId=\($0)" }), "\(deletes)")
        }
    }
}
