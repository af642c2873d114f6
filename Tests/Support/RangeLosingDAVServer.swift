public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal in-memory WebDAV server (PUT, GET with Range, PROPFIND, MOVE, DELETE) that mishandles
/// `PUT` with `Content-Range` the way some real servers do, for the ranged-upload fault tests:
///
/// - ``Mode/copyModifyRename``: each ranged `PUT` copies the file as its request arrives, writes its
///   range into the copy once the body is in, and replaces the file with it (lighttpd's
///   "partial-put-copy-modify"). Ranges sent at once overwrite each other with the zeros they
///   copied; a lone range (the probe) works. Each ranged `PUT` waits 300 ms after its copy, so all
///   of a file's ranges copy before any replaces.
/// - ``Mode/refuse``: a ranged `PUT` is answered 501.
///
/// Plain `PUT`s store the body. Files live under their decoded paths; the server has no folders.
public final class RangeLosingDAVServer: Sendable {
    public enum Mode: Sendable { case copyModifyRename, refuse }

    private let server: LoopbackServer
    private let files = Locked<[String: [UInt8]]>([:])
    private let heads = Locked<[String]>([])
    public var port: Int { server.port }
    /// `METHOD path Content-Range` of every request so far (`-` without Content-Range).
    public var requests: [String] { heads.value }
    /// A stored file's bytes.
    public func file(_ path: String) -> Data? { files.value[path].map { Data($0) } }
    /// The stored paths.
    public var paths: [String] { files.value.keys.sorted() }

    public init(mode: Mode) throws {
        let files = self.files
        let heads = self.heads
        server = try LoopbackServer { client in
            var buffer: [UInt8] = []
            while let request = HTTPTestRequest.read(from: client, buffer: &buffer) {
                let range = request.header("content-range")
                heads.mutate { $0.append("\(request.method) \(request.path) \(range ?? "-")") }
                var reply: (status: String, headers: [String], body: [UInt8])
                switch request.method {
                case "PUT":
                    if let range, let (start, _, total) = Self.parse(contentRange: range) {
                        if mode == .refuse {
                            _ = request.readBody(from: client, buffer: &buffer)
                            reply = ("501 Not Implemented", [], [])
                            break
                        }
                        var copy = files.value[request.path] ?? []
                        Thread.sleep(forTimeInterval: 0.3)
                        guard let body = request.readBody(from: client, buffer: &buffer) else { return }
                        if copy.count < total { copy += [UInt8](repeating: 0, count: total - copy.count) }
                        copy.replaceSubrange(start..<(start + body.count), with: body)
                        files.mutate { $0[request.path] = copy }
                    } else {
                        guard let body = request.readBody(from: client, buffer: &buffer) else { return }
                        files.mutate { $0[request.path] = body }
                    }
                    reply = ("201 Created", [], [])
                case "GET":
                    _ = request.readBody(from: client, buffer: &buffer)
                    guard let bytes = files.value[request.path] else { reply = ("404 Not Found", [], []); break }
                    if let wanted = request.header("range"), let (start, end) = Self.parse(range: wanted, size: bytes.count) {
                        reply = ("206 Partial Content", ["Content-Range: bytes \(start)-\(end)/\(bytes.count)"], Array(bytes[start...end]))
                    } else {
                        reply = ("200 OK", [], bytes)
                    }
                case "PROPFIND":
                    _ = request.readBody(from: client, buffer: &buffer)
                    let stored = files.value
                    var entries: [(String, Int?)] = []
                    if request.path == "/" {
                        entries = [("/", nil)] + (request.header("depth") == "0" ? [] : stored.keys.sorted().map { ($0, stored[$0]!.count) })
                    } else if let bytes = stored[request.path] {
                        entries = [(request.path, bytes.count)]
                    }
                    guard !entries.isEmpty else { reply = ("404 Not Found", [], []); break }
                    reply = ("207 Multi-Status", ["Content-Type: application/xml; charset=utf-8"], Self.multistatus(entries))
                case "MOVE":
                    _ = request.readBody(from: client, buffer: &buffer)
                    guard let destination = request.header("destination").flatMap({ URL(string: $0)?.path }),
                          let bytes = files.value[request.path] else { reply = ("404 Not Found", [], []); break }
                    files.mutate {
                        $0[destination] = bytes
                        $0[request.path] = nil
                    }
                    reply = ("201 Created", [], [])
                case "DELETE":
                    _ = request.readBody(from: client, buffer: &buffer)
                    var existed = false
                    files.mutate { existed = $0.removeValue(forKey: request.path) != nil }
                    reply = (existed ? "204 No Content" : "404 Not Found", [], [])
                default:
                    _ = request.readBody(from: client, buffer: &buffer)
                    reply = ("200 OK", ["DAV: 1"], [])
                }
                let head = "HTTP/1.1 \(reply.status)\r\n" + (reply.headers + ["Content-Length: \(reply.body.count)"]).joined(separator: "\r\n") + "\r\n\r\n"
                let bytes = Array(head.utf8) + reply.body
                var sent = 0
                while sent < bytes.count {
                    let count = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if count <= 0 { return }
                    sent += count
                }
            }
        }
    }

    public func stop() { server.stop() }

    /// `bytes A-B/SIZE` as (A, B, SIZE).
    static func parse(contentRange: String) -> (Int, Int, Int)? {
        let numbers = contentRange.dropFirst("bytes ".count).split(whereSeparator: { $0 == "-" || $0 == "/" }).compactMap { Int($0) }
        return numbers.count == 3 ? (numbers[0], numbers[1], numbers[2]) : nil
    }

    /// `bytes=A-B` or `bytes=A-` as (A, B) within `size`.
    static func parse(range: String, size: Int) -> (Int, Int)? {
        let parts = range.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Int(parts[0]), start < size else { return nil }
        return (start, min(Int(parts[1]) ?? (size - 1), size - 1))
    }

    static func multistatus(_ entries: [(String, Int?)]) -> [UInt8] {
        var xml = #"<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:">"#
        for (path, size) in entries {
            let href = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
            let properties = size.map { "<D:resourcetype/><D:getcontentlength>\($0)</D:getcontentlength>" }
                ?? "<D:resourcetype><D:collection/></D:resourcetype>"
            xml += "<D:response><D:href>\(href)</D:href><D:propstat><D:prop>\(properties)</D:prop>"
                + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
        }
        return Array((xml + "</D:multistatus>").utf8)
    }
}
