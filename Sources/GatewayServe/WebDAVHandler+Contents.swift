import Foundation
import GatewayCore
import GatewayServeRequests
import HTTPTypes
import HummingbirdCore
import NIOCore

/// `GET`, `HEAD` and `PUT`: contents streamed both ways, with ranges and conditional requests.
extension WebDAVHandler {
    /// The size of the pieces a response body is read and sent in: 64 KiB, under glibc's mmap
    /// threshold, so each comes from the heap and is reused. (256 KiB pieces were mapped, freed
    /// on another thread and spread over arenas: momentary peaks of 65–84 MB and half the speed;
    /// with 64 KiB, 58–64 MB and 1.6–2.5 GiB/s for a 1 GiB GET.)
    static let responseChunk = 64 << 10

    func get(_ request: Request, path: String, head: Bool) async throws -> Response {
        guard let item = try await item(path) else { return Self.plain(.notFound, "not found") }
        if let browser, let answer = try await browser.respond(request, path: path, item: item, head: head) { return answer }
        if item.isDirectory { return index(of: item, path: path, head: head) }
        guard let reader = provider as? any FileProviderReadWrite else { return Self.plain(.notImplemented, "this remote cannot be read") }
        let etag = Self.etag(item)
        if let failed = Conditions.check(request.headers, etag: etag, modified: item.modificationDate, exists: true, readMethod: true) {
            var headers = HTTPFields()
            headers[.eTag] = etag
            return failed == .notModified ? Response(status: .notModified, headers: headers, body: ResponseBody())
                : Self.plain(.preconditionFailed, "precondition failed", headers: headers)
        }
        let size = item.size ?? 0
        var headers = HTTPFields()
        headers[.eTag] = etag
        headers[.acceptRanges] = "bytes"
        headers[.contentType] = item.contentType ?? "application/octet-stream"
        if let modified = item.modificationDate { headers[.lastModified] = ServeText.httpDate(modified) }
        if browser != nil, ShareBrowser.wantsDownload(request) { headers[.contentDisposition] = ShareBrowser.attachment(item.name) }
        var status = HTTPResponse.Status.ok
        var offset: Int64 = 0
        var length = size
        if let range = request.headers[.range], Conditions.rangeApplies(request.headers, etag: etag) {
            switch ByteRange.parse(range, size: size) {
            case .whole: break
            case .unsatisfiable:
                var failed = HTTPFields()
                failed[.contentRange] = "bytes */\(size)"
                return Self.plain(.rangeNotSatisfiable, "range not satisfiable", headers: failed)
            case .range(let start, let count):
                status = .partialContent
                offset = start
                length = count
                headers[.contentRange] = "bytes \(start)-\(start + count - 1)/\(size)"
            }
        }
        headers[.contentLength] = String(length)
        if head || length == 0 { return Response(status: status, headers: headers, body: ResponseBody()) }
        // Small chunks and a bounded read-ahead: a server answers many clients at once, and what
        // it holds per response is what its memory grows by (the socket drains at the client's pace).
        var readOptions = ReadOptions(offset: offset, length: length, ifVersion: item.versionTag, chunkSize: Self.responseChunk)
        readOptions.bufferSize = 1 << 20
        let stream = try await reader.readStream(path: path, options: readOptions)
        let body = ResponseBody(contentLength: Int(clamping: length)) { writer in
            for try await chunk in stream { try await writer.write(ByteBuffer(bytes: chunk)) }
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// A folder's `GET`: a small HTML index of its entries, written as they are listed.
    private func index(of folder: FileObject, path: String, head: Bool) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        if head { return Response(status: .ok, headers: headers, body: ResponseBody()) }
        let provider = self.provider
        let paths = self.paths
        let title = ServeText.xml(paths.href(for: path, isFolder: true).removingPercentEncoding ?? path)
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>\(title)</title></head><body><h1>\(title)</h1><ul>\n"))
            for try await page in provider.contentsOfDirectory(path: path, pageSize: 1000) {
                var chunk = ""
                for entry in page.entries {
                    let href = ServeText.xml(paths.href(for: entry.path, isFolder: entry.isDirectory))
                    chunk += "<li><a href=\"\(href)\">\(ServeText.xml(entry.name))\(entry.isDirectory ? "/" : "")</a></li>\n"
                }
                try await writer.write(ByteBuffer(string: chunk))
            }
            try await writer.write(ByteBuffer(string: "</ul></body></html>\n"))
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    func put(_ request: Request, path: String) async throws -> Response {
        guard let writer = provider as? any FileProviderReadWrite else { return Self.plain(.notImplemented, "this remote cannot be written") }
        guard path != paths.root else { return Self.plain(.methodNotAllowed, "the root is a folder") }
        if request.headers[.contentRange] != nil { return Self.plain(.badRequest, "partial PUT (Content-Range) is not supported") }
        let existing = try await item(path)
        if existing?.isDirectory == true { return Self.plain(.methodNotAllowed, "a folder has this name") }
        guard try await item(RemotePath.parent(of: path))?.isDirectory == true else {
            return Self.plain(.conflict, "the parent folder does not exist")
        }
        if Conditions.check(request.headers, etag: existing.map(Self.etag), modified: existing?.modificationDate,
                            exists: existing != nil, readMethod: false) != nil {
            return Self.plain(.preconditionFailed, "precondition failed")
        }
        var expected: Int64?
        if let length = request.headers[.contentLength] {
            guard let value = Int64(length), value >= 0 else { return Self.plain(.badRequest, "bad Content-Length") }
            expected = value
        }
        let stream = ByteStream(request.body.map { Data($0.readableBytesView) }, expectedLength: expected)
        var options = WriteOptions(overwrite: true, atomically: true, expectedSize: expected)
        options.returnsStoredAttributes = false
        _ = try await writer.write(path: path, from: stream, options: options)
        return Self.plain(existing == nil ? .created : .noContent, existing == nil ? "created" : "replaced")
    }
}

/// Conditional requests (RFC 9110 section 13): `If-Match`, `If-None-Match`, `If-Modified-Since`,
/// `If-Unmodified-Since`, `If-Range`.
enum Conditions {
    enum Failure: Equatable { case notModified, preconditionFailed }

    /// The failure the preconditions give, or `nil` when the request goes ahead.
    static func check(_ headers: HTTPFields, etag: String?, modified: Date?, exists: Bool, readMethod: Bool) -> Failure? {
        if let ifMatch = headers[.ifMatch] {
            let tags = EntityTag.list(ifMatch)
            let matches = tags.contains("*") ? exists : etag.map { tag in tags.contains { EntityTag.strongEqual($0, tag) } } ?? false
            if !matches { return .preconditionFailed }
        } else if let text = headers[.ifUnmodifiedSince], let date = ServeText.parseHTTPDate(text), let modified,
                  modified.timeIntervalSince1970.rounded(.down) > date.timeIntervalSince1970 {
            return .preconditionFailed
        }
        if let ifNoneMatch = headers[.ifNoneMatch] {
            let tags = EntityTag.list(ifNoneMatch)
            let matches = tags.contains("*") ? exists : etag.map { tag in tags.contains { EntityTag.weakEqual($0, tag) } } ?? false
            if matches { return readMethod ? .notModified : .preconditionFailed }
        } else if readMethod, let text = headers[.ifModifiedSince], let date = ServeText.parseHTTPDate(text), let modified,
                  modified.timeIntervalSince1970.rounded(.down) <= date.timeIntervalSince1970 {
            return .notModified
        }
        return nil
    }

    /// Whether a `Range` applies: no `If-Range`, or one naming the current (strong) entity tag.
    static func rangeApplies(_ headers: HTTPFields, etag: String) -> Bool {
        guard let ifRange = headers[.ifRange]?.trimmingCharacters(in: .whitespaces) else { return true }
        return ifRange.hasPrefix("\"") && EntityTag.strongEqual(ifRange, etag)
    }
}
