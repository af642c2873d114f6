import Foundation
public import GatewayCore
import GatewayTransport

extension S3Provider {
    /// A ranged `GET`; with ``ReadOptions/ifVersion`` the read is pinned to that ETag (`If-Match`:
    /// a replaced object answers 412, never a mix of two versions).
    public func readStream(path: String, options: ReadOptions) async throws -> ByteStream {
        let remote = try RemotePath.normalize(path)
        let options = try options.checked(path: remote)
        guard remote != "/" else { throw CocoaError.posix(EISDIR, path: remote, remote: name) }
        if options.length == 0 {
            // Nothing to read, but the object must exist (at that version).
            guard let item = try await headObject(remote) else {
                if try await folderExists(remote) { throw CocoaError.posix(EISDIR, path: remote, remote: name) }
                throw notFound(remote)
            }
            if let expected = options.ifVersion, item.versionTag != expected {
                throw FileProviderError.versionMismatch(path: remote, expected: expected, actual: item.versionTag)
            }
            return ByteStream(data: Data())
        }
        var headers: [(name: String, value: String)] = []
        if options.offset > 0 || options.length != nil {
            headers.append((name: "Range", value: "bytes=\(options.offset)-\(options.lastByte.map(String.init) ?? "")"))
        }
        if let expected = options.ifVersion { headers.append((name: "If-Match", value: expected)) }
        var request = request("GET", key: key(remote), headers: headers, path: remote)
        request.responseBuffer = options.bufferSize
        let (head, body) = try await client.stream(request)
        if let expected = options.ifVersion, head.isSuccess, let served = head.header("etag"), served != expected {
            // A server that ignores If-Match still names what it sends.
            throw FileProviderError.versionMismatch(path: remote, expected: expected, actual: served)
        }
        // `rclone serve s3` answers a range with 200 and a Content-Range: the range, not the whole object.
        let status = head.status == 200 && head.header("content-range") != nil && (options.offset > 0 || options.length != nil) ? 206 : head.status
        switch status {
        case 200:
            guard options.offset > 0 || options.length != nil else { return body }
            // The range was ignored: the whole object comes; skip and cut here.
            return RangeCutter.cut(body, skip: options.offset, limit: options.length, totalLength: head.contentLength, path: remote)
        case 206:
            let range = head.header("content-range") ?? ""
            guard range.hasPrefix("bytes \(options.offset)-") else {
                throw FileProviderError.malformedResponse(path: remote, detail: "206 Partial Content with Content-Range \"\(range.prefix(80))\" for bytes from \(options.offset)")
            }
            // Never more than was asked for, whatever the server sends.
            return RangeCutter.cut(body, skip: 0, limit: options.length, totalLength: head.contentLength, path: remote)
        case 416:
            return ByteStream(data: Data())
        case 404:
            let data = (try? await body.collect(limit: 1 << 16)) ?? Data()
            if try await folderExists(remote) { throw CocoaError.posix(EISDIR, path: remote, remote: name) }
            throw failure(head, body: data, path: remote)
        default:
            throw failure(head, body: (try? await body.collect(limit: 1 << 16)) ?? Data(), path: remote)
        }
    }
}
