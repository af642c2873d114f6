import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A test could not set up what it needs (a server is not running): it fails with this explanation.
public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A TCP socket bound to 127.0.0.1 on a port the system picks, listening when asked.
public enum LoopbackSocket {
    public static func bind(listening: Bool) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, length) == 0 && (!listening || listen(fd, 8) == 0) && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else {
            close(fd)
            throw TestSetupError("cannot bind a socket on 127.0.0.1")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}

/// A free TCP port on 127.0.0.1 (nothing listens on it once returned).
public enum FreePort {
    public static func make() throws -> Int {
        let (fd, port) = try LoopbackSocket.bind(listening: false)
        close(fd)
        return port
    }
}

/// Accepts connections on 127.0.0.1 and hands each to `serve`, on a thread of its own (nothing when
/// `serve` is `nil`); ``stop()`` closes the listener and every connection.
public final class LoopbackServer: @unchecked Sendable {
    public let port: Int
    private let fd: Int32
    private var accepted: [Int32] = []
    private var acceptedCount = 0
    private let lock = NSLock()

    /// Connections accepted so far.
    public var connections: Int { lock.withLock { acceptedCount } }

    /// Whether connections have a serving thread (which then closes its connection itself).
    private let serves: Bool

    public init(serve: (@Sendable (Int32) -> Void)? = nil) throws {
        (fd, port) = try LoopbackSocket.bind(listening: true)
        serves = serve != nil
        let listener = fd
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    // Closed here, by the only thread that uses it, never by `stop()`: a number
                    // closed under this loop could be handed to another test's listener, whose
                    // connections this loop would then accept and answer with its own script.
                    close(listener)
                    return
                }
                lock.withLock {
                    accepted.append(client)
                    acceptedCount += 1
                }
                if let serve {
                    Thread.detachNewThread { [self] in
                        serve(client)
                        // Forgotten before it is closed: stop() never touches a number the kernel
                        // may already have given to another test's connection.
                        lock.withLock { accepted.removeAll { $0 == client } }
                        close(client)
                    }
                }
            }
        }
    }

    /// Stops listening and ends every connection. A serving thread's connection is only shut
    /// down here (its thread wakes from `recv`, returns and closes it): closing it under the thread
    /// let the number be reused by a later server's connection, whose requests the old thread then
    /// read and answered.
    public func stop() {
        // Shutting the listener down wakes `accept` with an error; the accept loop closes it.
        shutdown(fd, Int32(SHUT_RDWR))
        lock.withLock {
            for client in accepted {
                shutdown(client, Int32(SHUT_RDWR))
                if !serves { close(client) }
            }
            if !serves { accepted.removeAll() }
        }
    }
}

/// Accepts connections on 127.0.0.1 and never answers: a stalled server.
public final class SilentServer: Sendable {
    private let server: LoopbackServer
    public var port: Int { server.port }
    /// Connections accepted so far (each one then waits for an answer that never comes).
    public var connections: Int { server.connections }
    public init() throws { server = try LoopbackServer() }
    public func stop() { server.stop() }
}

/// Answers every HTTP request on 127.0.0.1 with a `200` of `total` bytes, of which it sends
/// `first` at once and the rest only after `pause` seconds: a server that goes quiet in the middle
/// of a body.
public final class TricklingServer: Sendable {
    private let server: LoopbackServer
    public var port: Int { server.port }

    public init(total: Int, first: Int, pause: Double) throws {
        server = try LoopbackServer { client in
            var request = [UInt8](repeating: 0, count: 65536)
            var received = 0
            // Up to the end of the request head.
            while received < request.count {
                let count = recv(client, &request[received], request.count - received, 0)
                if count <= 0 { return }
                received += count
                if endOfHTTPHead(request[0..<received]) != nil { break }
            }
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: total)
            let head = Array("HTTP/1.1 200 OK\r\nContent-Length: \(total)\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
            func sendAll(_ bytes: ArraySlice<UInt8>) {
                var offset = bytes.startIndex
                while offset < bytes.endIndex {
                    let count = bytes[offset...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if count <= 0 { return }
                    offset += count
                }
            }
            sendAll(head[...])
            sendAll(body[0..<first])
            Thread.sleep(forTimeInterval: pause)
            sendAll(body[first...])
        }
    }

    public func stop() { server.stop() }
}

/// A minimal WebDAV server on 127.0.0.1 that records every request head: `OPTIONS` 200, `PROPFIND`
/// 404, `PUT` 201 (the body read and dropped), `MOVE` 201, `DELETE` 204; keep-alive.
public final class RecordingDAVServer: Sendable {
    private let server: LoopbackServer
    private let heads = Locked<[String]>([])
    public var port: Int { server.port }
    /// The request heads received so far, in order (request line and header lines, CRLF-separated).
    public var requests: [String] { heads.value }

    public init() throws {
        let heads = self.heads
        let files = Locked<[String: Int]>([:])
        server = try LoopbackServer { client in
            var buffer: [UInt8] = []
            while let request = HTTPTestRequest.read(from: client, buffer: &buffer) {
                heads.mutate { $0.append(request.head) }
                guard let body = request.readBody(from: client, buffer: &buffer) else { return }
                // Files stand where a PUT or MOVE put them, so a write's check of its final name passes.
                var status = ["OPTIONS": "200 OK", "PUT": "201 Created", "MOVE": "201 Created"][request.method] ?? "204 No Content"
                var answer = ""
                switch request.method {
                case "PUT":
                    files.mutate { $0[request.path] = body.count }
                case "MOVE":
                    if let destination = request.header("destination").flatMap(URL.init(string:))?.path {
                        files.mutate { $0[destination] = $0.removeValue(forKey: request.path) }
                    }
                case "PROPFIND":
                    if let size = files.value[request.path] {
                        status = "207 Multi-Status"
                        answer = "<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>\(request.path)</D:href>"
                            + "<D:propstat><D:prop><D:resourcetype/><D:getcontentlength>\(size)</D:getcontentlength></D:prop>"
                            + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>"
                    } else {
                        status = "404 Not Found"
                    }
                default:
                    break
                }
                let reply = Array("HTTP/1.1 \(status)\r\nDAV: 1, 2\r\nContent-Length: \(answer.utf8.count)\r\n\r\n\(answer)".utf8)
                _ = reply.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    public func stop() { server.stop() }
}

/// A value behind a lock.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    public init(_ value: Value) { stored = value }
    public var value: Value { lock.withLock { stored } }
    public func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
    /// Changes the value and returns what `body` returns.
    public func mutate<Result>(_ body: (inout Value) -> Result) -> Result { lock.withLock { body(&stored) } }
}

/// One HTTP/1.1 request read from a test server's connection: the head first, the body (by
/// Content-Length) when asked for.
struct HTTPTestRequest {
    /// The head as received: request line and header lines, CRLF-separated.
    let head: String
    let method: String
    /// The decoded path.
    let path: String
    let headers: [String: String]
    let length: Int

    func header(_ name: String) -> String? { headers[name] }

    /// Reads the next request head, or `nil` when the connection ends.
    static func read(from client: Int32, buffer: inout [UInt8]) -> HTTPTestRequest? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var headEnd = endOfHTTPHead(buffer)
        while headEnd == nil {
            let count = recv(client, &chunk, chunk.count, 0)
            if count <= 0 { return nil }
            buffer += chunk[0..<count]
            headEnd = endOfHTTPHead(buffer)
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        buffer.removeFirst(headEnd!)
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let target = requestLine.count > 1 ? String(requestLine[1]) : "/"
        let path = (URL(string: target)?.path).flatMap { $0.isEmpty ? "/" : $0 } ?? target
        return HTTPTestRequest(head: head, method: requestLine.first.map(String.init) ?? "", path: path, headers: headers,
                               length: headers["content-length"].flatMap { Int($0) } ?? 0)
    }

    /// Reads this request's body (Content-Length bytes, or chunked), or `nil` when the connection
    /// ends first.
    func readBody(from client: Int32, buffer: inout [UInt8]) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            var body: [UInt8] = []
            while true {
                // A size line, then that many bytes and CRLF; size 0 ends (no trailers expected).
                var lineEnd = buffer.firstIndex(of: 10)
                while lineEnd == nil {
                    let count = recv(client, &chunk, chunk.count, 0)
                    if count <= 0 { return nil }
                    buffer += chunk[0..<count]
                    lineEnd = buffer.firstIndex(of: 10)
                }
                let line = String(decoding: buffer[0..<lineEnd!], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                guard let size = Int(line.split(separator: ";").first.map(String.init) ?? "", radix: 16) else { return nil }
                while buffer.count < lineEnd! + 1 + size + 2 {
                    let count = recv(client, &chunk, chunk.count, 0)
                    if count <= 0 { return nil }
                    buffer += chunk[0..<count]
                }
                body += buffer[(lineEnd! + 1)..<(lineEnd! + 1 + size)]
                buffer.removeFirst(lineEnd! + 1 + size + 2)
                if size == 0 { return body }
            }
        }
        while buffer.count < length {
            let count = recv(client, &chunk, chunk.count, 0)
            if count <= 0 { return nil }
            buffer += chunk[0..<count]
        }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return body
    }
}

/// Where an HTTP head ends in `bytes` (just past its blank line), or `nil` before it is complete.
func endOfHTTPHead<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Int? where Bytes.Index == Int {
    guard bytes.count >= 4 else { return nil }
    for index in bytes.startIndex...(bytes.endIndex - 4)
    where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
        return index + 4
    }
    return nil
}
