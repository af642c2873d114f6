import Foundation
public import GatewayCore
import GatewayTransport

extension WebDAVProvider {
    public func readStream(path: String, options: ReadOptions) async throws -> ByteStream {
        let remote = try RemotePath.normalize(path)
        let options = try options.checked(path: remote)
        if let expected = options.ifVersion, expected.hasPrefix("W/") || expected.hasPrefix("lm:") {
            // Compared here (weak ETags never pass a strong If-Match, yet they name a version); a
            // strong ETag goes in If-Match below, and the server answers 412 when it changed.
            let current = try await attributesOfItem(path: remote)
            guard ETag.sameVersion(current.versionTag, expected) else {
                throw FileProviderError.versionMismatch(path: remote, expected: expected, actual: current.versionTag)
            }
        }
        if options.length == 0 { return ByteStream(data: Data()) }
        var headers: [(name: String, value: String)] = []
        if options.offset > 0 || options.length != nil {
            let end = options.lastByte.map(String.init) ?? ""
            headers.append((name: "Range", value: "bytes=\(options.offset)-\(end)"))
        }
        if let expected = options.ifVersion, !expected.hasPrefix("W/"), !expected.hasPrefix("lm:") {
            headers.append((name: "If-Match", value: expected))
        }
        var url = paths.url(remote)
        for _ in 0..<5 {
            var request = HTTPRequest(method: "GET", url: url, path: remote, headers: headers)
            request.responseBuffer = options.bufferSize
            let (head, body) = try await client.stream(request)
            // (An `lm:` tag, no ETag in listings, was compared above.)
            if let expected = options.ifVersion, !expected.hasPrefix("lm:"), (200..<300).contains(head.status),
               let served = head.header("etag"), !ETag.sameUnquoted(served, expected) {
                // A server that ignores If-Match on GET (lighttpd) still names what it sends.
                throw FileProviderError.versionMismatch(path: remote, expected: expected, actual: served)
            }
            switch head.status {
            case 200:
                // The server ignored the range: skip and cut here.
                let length = head.contentLength
                return RangeCutter.cut(body, skip: options.offset, limit: options.length, totalLength: length, path: remote)
            case 206:
                // The part sent must be the one asked for: bytes of another offset would land in
                // the wrong place. One that starts earlier is cut to size; anything else fails.
                guard let served = head.header("content-range").flatMap(ContentRange.init), served.first <= options.offset,
                      served.last >= options.offset else {
                    throw FileProviderError.malformedResponse(path: remote, detail: "206 Partial Content with Content-Range "
                        + "\(head.header("content-range").map { "\"\($0.prefix(80))\"" } ?? "missing") for bytes from \(options.offset)")
                }
                if served.first == options.offset { return body }
                let length = served.last - served.first + 1
                return RangeCutter.cut(body, skip: options.offset - served.first, limit: options.length, totalLength: length, path: remote)
            case 416:
                return ByteStream(data: Data())
            case 301, 302, 303, 307, 308:
                let target = try redirectTarget(head, from: url, path: remote)
                if target.absoluteString == url.absoluteString + "/" {
                    throw CocoaError.posix(EISDIR, path: remote, remote: name)
                }
                url = target
            case 412:
                throw FileProviderError.versionMismatch(path: remote, expected: options.ifVersion ?? "", actual: nil)
            case 403, 404, 405:
                // Apache and WsgiDAV answer 404, rclone 405, others 403 to a GET of a folder:
                // asked once more, a folder is named as one (as nginx's and lighttpd's redirect is).
                let error = failure(head, body: (try? await body.collect(limit: 1 << 16)) ?? Data(), path: remote)
                if (try? await attributesOfItem(path: remote))?.isDirectory == true {
                    throw CocoaError.posix(EISDIR, path: remote, remote: name)
                }
                throw error
            default:
                throw failure(head, body: (try? await body.collect(limit: 1 << 16)) ?? Data(), path: remote)
            }
        }
        throw FileProviderHTTPError(statusCode: 310, path: remote, serverText: "too many redirects")
    }
}

/// A `Content-Range: bytes FIRST-LAST/TOTAL` header (TOTAL may be `*`).
struct ContentRange: Equatable {
    var first: Int64
    var last: Int64

    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes "), trimmed.count < 200 else { return nil }
        let range = trimmed.dropFirst(6).prefix { $0 != "/" }
        let bounds = range.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0].trimmingCharacters(in: .whitespaces)),
              let last = Int64(bounds[1].trimmingCharacters(in: .whitespaces)), first >= 0, last >= 0 else { return nil }
        self.first = first
        self.last = last
    }
}
