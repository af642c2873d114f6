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
    private let lock = NSLock()

    public init(serve: (@Sendable (Int32) -> Void)? = nil) throws {
        (fd, port) = try LoopbackSocket.bind(listening: true)
        let listener = fd
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }
                lock.withLock { accepted.append(client) }
                if let serve { Thread.detachNewThread { serve(client) } }
            }
        }
    }

    public func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        lock.withLock { accepted.forEach { close($0) } }
    }
}

/// Accepts connections on 127.0.0.1 and never answers: a stalled server.
public final class SilentServer: Sendable {
    private let server: LoopbackServer
    public var port: Int { server.port }
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
                if String(decoding: request[0..<received], as: UTF8.self).contains("\r\n\r\n") { break }
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
