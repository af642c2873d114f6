import Foundation
import GatewayCore
@testable import GatewayTestSupport
@testable import GatewayTransport
import Logging
import Synchronization
import Testing

/// Requests run by a caller that is on a ``BlockingIOExecutor`` thread (the copy engine's transfers):
/// small ones run right there, on the real Apache server, and still fail, cancel and stream as before.
@Suite("Inline HTTP transfers", .timeLimit(.minutes(1)))
struct InlineTransferTests {
    static func client() throws -> HTTPClient {
        let server = try WebDAVFailureTests.server()
        return HTTPClient(configuration: HTTPClientConfiguration(baseURL: server.url, remoteName: "dav", user: server.user, password: server.password),
                          logger: Logger(label: "test"))
    }

    static func request(_ client: HTTPClient, _ method: String, _ path: String, headers: [(name: String, value: String)] = [],
                        body: HTTPRequest.Body = .none) -> HTTPRequest {
        HTTPRequest(method: method, url: client.configuration.baseURL.appendingPathComponent(String(path.dropFirst())), path: path,
                    headers: headers, body: body)
    }

    @Test("a PUT from a buffer, a MOVE and a DELETE run on the calling thread: no hand-off to the client's threads")
    func smallRequestsRunInline() async throws {
        let client = try Self.client()
        let name = "/inline-\(UUID().uuidString.prefix(8))"
        let contents = Data("inline body".utf8)
        let executor = BlockingIOExecutor()
        let statuses = try await withTaskExecutorPreference(executor) {
            let put = try await client.send(Self.request(client, "PUT", name + ".tmp", body: .data(contents))).0.status
            let move = try await client.send(Self.request(client, "MOVE", name + ".tmp", headers: [
                (name: "Destination", value: client.configuration.baseURL.appendingPathComponent(String(name.dropFirst())).absoluteString),
            ])).0.status
            let missing = try await client.send(Self.request(client, "DELETE", name + ".tmp")).0.status
            return [put, move, missing]
        }
        #expect(statuses == [201, 201, 404])
        #expect(client.threads.submittedCount == 0, "\(client.threads.submittedCount) requests were handed to another thread")

        // The same request from the concurrency pool goes to the client's own thread, as before.
        let (head, body) = try await client.send(Self.request(client, "GET", name))
        #expect(head.status == 200)
        #expect(body == contents)
        #expect(client.threads.submittedCount == 1)
        _ = try await client.send(Self.request(client, "DELETE", name))
    }

    @Test("a streamed answer is never run inline: its caller reads the body while it arrives")
    func streamedAnswerIsHandedOff() async throws {
        let client = try Self.client()
        let name = "/inline-stream-\(UUID().uuidString.prefix(8))"
        let contents = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        _ = try await client.send(Self.request(client, "PUT", name, body: .data(contents)))
        let handedOff = client.threads.submittedCount
        let executor = BlockingIOExecutor()
        // A body larger than the smallest channel: run inline, this would wait for its own reader.
        var request = Self.request(client, "GET", name)
        request.responseBuffer = 512 << 10
        let received = try await withTaskExecutorPreference(executor) {
            let (head, body) = try await client.stream(request)
            #expect(head.status == 200)
            return try await body.collect()
        }
        #expect(received == contents)
        #expect(client.threads.submittedCount == handedOff + 1, "the GET ran on a transfer thread of the client's")
        _ = try await client.send(Self.request(client, "DELETE", name))
    }

    @Test("an inline request to a server that never answers ends promptly when its task is cancelled")
    func inlineCancellation() async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let client = HTTPClient(configuration: HTTPClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(server.port)/")!, remoteName: "silent",
                                                                      connectTimeout: .seconds(30), idleTimeout: .seconds(30)),
                                logger: Logger(label: "test"))
        let executor = BlockingIOExecutor()
        let clock = ContinuousClock()
        let task = Task(executorPreference: executor) {
            try await client.send(Self.request(client, "MOVE", "/a", headers: [(name: "Destination", value: "http://127.0.0.1/b")]))
        }
        // Cancelled once the request waits on the silent server.
        try await waitUntil("the request reaching the silent server") { server.connections > 0 }
        let cancelled = clock.now
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("a request to a silent server cannot succeed")
        } catch {
            #expect(error.failureKind == .cancelled, "got \(error)")
        }
        // libcurl checks the abort flag at least once a second while the connection is quiet.
        #expect(clock.now - cancelled < .seconds(5))
        #expect(client.threads.submittedCount == 0, "the request ran inline")
    }

    @Test("a collected answer cut off mid-body fails as a lost connection, inline or not; never a short body taken as whole")
    func cutOffAnswer() async throws {
        let requests = Mutex(0)
        // Answers every request with a head announcing 1,000 bytes, sends 100, and hangs up.
        let server = try LoopbackServer { client in
            var head: [UInt8] = []
            var byte: UInt8 = 0
            while recv(client, &byte, 1, 0) == 1 {
                head.append(byte)
                if head.suffix(4) == Array("\r\n\r\n".utf8) { break }
            }
            requests.withLock { $0 += 1 }
            let answer = Array("HTTP/1.1 207 Multi-Status\r\nContent-Length: 1000\r\n\r\n".utf8) + [UInt8](repeating: 0x61, count: 100)
            _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            shutdown(client, Int32(SHUT_RDWR))  // closed by stop()
        }
        defer { server.stop() }
        let client = HTTPClient(configuration: HTTPClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(server.port)/")!, remoteName: "cut",
                                                                      connectTimeout: .seconds(5), idleTimeout: .seconds(5)),
                                logger: Logger(label: "test"))
        let executor = BlockingIOExecutor()
        for inline in [true, false] {
            requests.withLock { $0 = 0 }
            let request = Self.request(client, "MOVE", "/a", headers: [(name: "Destination", value: "http://127.0.0.1/b")])
            do {
                let answer = if inline {
                    try await withTaskExecutorPreference(executor) { try await client.send(request) }
                } else {
                    try await client.send(request)
                }
                Issue.record("a cut-off answer was taken as whole (\(answer.1.count) bytes, inline: \(inline))")
            } catch {
                #expect(error.failureKind == .connectionLost, "inline: \(inline): \(error)")
            }
            // A MOVE is never sent twice: the server may have carried it out.
            #expect(requests.withLock { $0 } == 1, "inline: \(inline)")
        }
    }

    @Test("header lines lose spaces, tabs, CR and LF at both ends, nothing inside; names are lower case")
    func headerLines() {
        func parse(_ text: String) -> CurlTransfer.HeaderLine {
            Array(text.utf8).withUnsafeBytes { CurlTransfer.headerLine($0) }
        }
        #expect(parse(" \tContent-Type: text/plain; a=b \r\n") == .field(name: "content-type", value: "text/plain; a=b"))
        #expect(parse("\r\n") == .other)
        #expect(parse("HTTP/1.1 207 Multi-Status\r\n") == .status)
        #expect(parse("ETag: \"x y\"") == .field(name: "etag", value: "\"x y\""))
        #expect(parse("X-Name:  naïve ünïcode\u{a0}\r\n") == .field(name: "x-name", value: "naïve ünïcode\u{a0}"))
        #expect(parse("X-Empty:\r\n") == .field(name: "x-empty", value: ""))
        #expect(parse("no colon here") == .other)
        // Bytes that are not UTF-8 are repaired, never trusted.
        #expect([UInt8]("X-Bad: a".utf8 + [0xFF] + "b\r\n".utf8).withUnsafeBytes { CurlTransfer.headerLine($0) }
            == .field(name: "x-bad", value: "a\u{FFFD}b"))
    }

    @Test("header bounds: a repeated field is one list; no name is dropped; past 256 KiB a head is refused, not cut")
    func headerBounds() {
        var headers: [String: String] = [:]
        var bytes = 0
        #expect(CurlTransfer.add(name: "dav", value: "1,2", to: &headers, bytes: &bytes))
        #expect(CurlTransfer.add(name: "dav", value: "<http://apache.org/dav/propset/fs/1>", to: &headers, bytes: &bytes))
        #expect(headers["dav"] == "1,2, <http://apache.org/dav/propset/fs/1>")
        // Many names (S3 user metadata, a chatty proxy): all kept, and one that matters after them too.
        for index in 0..<2_000 { #expect(CurlTransfer.add(name: "x-amz-meta-\(index)", value: "v", to: &headers, bytes: &bytes)) }
        #expect(CurlTransfer.add(name: "content-range", value: "bytes 5-9/10", to: &headers, bytes: &bytes))
        #expect(headers.count == 2_002 && headers["content-range"] == "bytes 5-9/10")
        #expect(bytes == headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count })
        // Up to the bound exactly, then nothing more: the line that would pass it is refused whole.
        let room = CurlTransfer.maxHeaderBytes - bytes - "x-fill".utf8.count
        #expect(CurlTransfer.add(name: "x-fill", value: String(repeating: "a", count: room), to: &headers, bytes: &bytes))
        #expect(bytes == CurlTransfer.maxHeaderBytes)
        #expect(!CurlTransfer.add(name: "etag", value: "\"x\"", to: &headers, bytes: &bytes) && headers["etag"] == nil)
        #expect(!CurlTransfer.add(name: "dav", value: "3", to: &headers, bytes: &bytes))
        #expect(headers["dav"] == "1,2, <http://apache.org/dav/propset/fs/1>" && bytes == CurlTransfer.maxHeaderBytes)
    }
}
