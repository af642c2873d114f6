public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A request as a ``ScriptedHTTPServer`` received it.
public struct ScriptedRequest: Sendable {
    /// Request line and header lines, CRLF-separated.
    public let head: String
    public let method: String
    /// The request target as sent (percent-encoded, trailing slash kept).
    public let target: String
    /// The decoded path (Foundation's: without a trailing slash).
    public let path: String
    /// Headers by lower-case name.
    public let headers: [String: String]
    public let body: [UInt8]
}

/// What a ``ScriptedHTTPServer`` sends back for one request: steps run in order on the connection.
public struct ScriptedReply: Sendable {
    /// One step of a reply.
    public enum Step: Sendable {
        /// Sends these bytes.
        case bytes([UInt8])
        /// Waits this many seconds.
        case pause(Double)
        /// Sends `chunk` again and again, `interval` seconds apart, until `total` bytes went out, the
        /// client closed the connection, or `seconds` passed: a hostile endless body, bounded here.
        case repeating(chunk: [UInt8], interval: Double, total: Int, seconds: Double)
        /// Closes the connection.
        case close
    }

    public var steps: [Step]

    public init(_ steps: [Step]) { self.steps = steps }

    /// A complete answer with `Content-Length`.
    public static func http(_ status: String, headers: [(String, String)] = [], body: String = "") -> ScriptedReply {
        http(status, headers: headers, body: Array(body.utf8))
    }

    /// A complete answer with `Content-Length`.
    public static func http(_ status: String, headers: [(String, String)] = [], body: [UInt8]) -> ScriptedReply {
        ScriptedReply([.bytes(head(status, headers: headers + [("Content-Length", String(body.count))])), .bytes(body)])
    }

    /// A status line and headers, with the blank line that ends them.
    public static func head(_ status: String, headers: [(String, String)]) -> [UInt8] {
        var text = "HTTP/1.1 \(status)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// A 207 Multi-Status of the given `<D:response>` elements.
    public static func multistatus(_ responses: String) -> ScriptedReply {
        http("207 Multi-Status", headers: [("Content-Type", "application/xml; charset=utf-8")],
             body: "<?xml version=\"1.0\" encoding=\"utf-8\"?><D:multistatus xmlns:D=\"DAV:\">\(responses)</D:multistatus>")
    }

    /// One `<D:response>` for a file (size given, `nil` leaves it out) or a folder.
    public static func response(href: String, size: String? = nil, folder: Bool = false) -> String {
        let type = folder ? "<D:resourcetype><D:collection/></D:resourcetype>" : "<D:resourcetype/>"
        let length = size.map { "<D:getcontentlength>\($0)</D:getcontentlength>" } ?? ""
        return "<D:response><D:href>\(href)</D:href><D:propstat><D:prop>\(type)\(length)"
            + "<D:getlastmodified>Mon, 23 Nov 2026 10:00:00 GMT</D:getlastmodified></D:prop>"
            + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
    }
}

/// An HTTP/1.1 server on 127.0.0.1 whose every answer is chosen by a closure: for hostile and
/// odd servers in tests (redirects elsewhere, endless or cut-off bodies, echoed secrets). Records
/// every request; keeps connections alive until a reply closes one.
public final class ScriptedHTTPServer: Sendable {
    private let server: LoopbackServer
    private let received = Locked<[ScriptedRequest]>([])
    public var port: Int { server.port }
    /// The requests received so far, in order.
    public var requests: [ScriptedRequest] { received.value }
    /// `http://127.0.0.1:PORT` followed by `path`.
    public func url(_ path: String = "/") -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    public init(_ answer: @escaping @Sendable (ScriptedRequest) -> ScriptedReply) throws {
        let received = self.received
        server = try LoopbackServer { client in
            var buffer: [UInt8] = []
            while let request = HTTPTestRequest.read(from: client, buffer: &buffer) {
                guard let body = request.readBody(from: client, buffer: &buffer) else { return }
                let requestLine = request.head.prefix { $0 != "\r" }.split(separator: " ")
                let target = requestLine.count > 1 ? String(requestLine[1]) : "/"
                let scripted = ScriptedRequest(head: request.head, method: request.method, target: target, path: request.path,
                                               headers: request.headers, body: body)
                received.mutate { $0.append(scripted) }
                for step in answer(scripted).steps {
                    switch step {
                    case .bytes(let bytes):
                        guard Self.sendAll(client, bytes[...]) else { return }
                    case .pause(let seconds):
                        Thread.sleep(forTimeInterval: seconds)
                    case .repeating(let chunk, let interval, let total, let seconds):
                        let deadline = Date().addingTimeInterval(seconds)
                        var sent = 0
                        while sent < total, Date() < deadline {
                            guard Self.sendAll(client, chunk[...]) else { return }
                            sent += chunk.count
                            if interval > 0 { Thread.sleep(forTimeInterval: interval) }
                        }
                    case .close:
                        shutdown(client, Int32(SHUT_RDWR))
                        return
                    }
                }
            }
        }
    }

    public func stop() { server.stop() }

    /// Sends all bytes; `false` when the client went away.
    static func sendAll(_ client: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let count = bytes[offset...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { return false }
            offset += count
        }
        return true
    }
}
