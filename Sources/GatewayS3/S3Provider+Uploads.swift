import Foundation
public import GatewayCore
import GatewayS3Protocol
import GatewayState
import GatewayTransport

/// Multipart uploads left open (a writer killed mid-upload): listed and aborted for `gateway
/// cleanup`, and continued by the next write of the same key.
extension S3Provider: FileProviderIncompleteUploads {
    public func incompleteUploads(below path: String) -> PullSequence<IncompleteUpload> {
        PullSequence { [self] in
            var pages: PullSequence<[UploadsPage.Upload]>.AsyncIterator?
            var remote = "/"
            var pending: [IncompleteUpload] = []
            return {
                while pending.isEmpty {
                    if pages == nil {
                        remote = try RemotePath.normalize(path)
                        pages = self.uploadPages(prefix: remote == "/" ? self.configuration.prefix : self.key(remote), path: remote).makeAsyncIterator()
                    }
                    guard let uploads = try await pages?.next() else { return nil }
                    for upload in uploads {
                        // A key no path names exactly is shown as near as can be (below the
                        // remote's root only), and aborted by its key.
                        guard let below = Self.remainder(of: upload.key, after: self.configuration.prefix) else { continue }
                        let exact = self.remotePath(ofKey: upload.key)
                        let uploadPath = exact ?? "/" + below
                        guard remote == "/" || (exact != nil && (uploadPath == remote || uploadPath.hasPrefix(remote + "/"))) else { continue }
                        pending.append(IncompleteUpload(path: uploadPath, id: upload.id, initiated: upload.initiated, serverName: upload.key))
                    }
                }
                return pending.removeFirst()
            }
        }
    }

    public func abortIncompleteUpload(_ upload: IncompleteUpload) async throws {
        let remote = upload.serverName == nil ? try RemotePath.normalize(upload.path) : upload.path
        let objectKey = upload.serverName ?? key(remote)
        guard Self.remainder(of: objectKey, after: configuration.prefix) != nil else {
            throw FileProviderError.invalidPath(path: upload.path, reason: "the upload is not below this remote's prefix")
        }
        let (head, body) = try await send("DELETE", key: objectKey, query: [("uploadId", upload.id)], path: remote)
        guard head.isSuccess || head.status == 404 else { throw failure(head, body: body, path: remote) }
    }

    /// One page of `ListMultipartUploads`.
    struct UploadsPage {
        /// One open upload.
        typealias Upload = (key: String, id: String, initiated: Date?)
        var uploads: [Upload] = []
        var isTruncated = false
        var nextKeyMarker: String?
        var nextUploadMarker: String?
    }

    /// The open uploads of keys starting with `prefix`, a page at a time. A truncated page whose
    /// markers do not move on ends the list (it would repeat itself forever).
    func uploadPages(prefix: String, path remote: String) -> PullSequence<[UploadsPage.Upload]> {
        PullSequence { [self] in
            var keyMarker: String?
            var uploadMarker: String?
            var finished = false
            return {
                guard !finished else { return nil }
                let page = try await self.uploadsPage(prefix: prefix, keyMarker: keyMarker, uploadMarker: uploadMarker, path: remote)
                let advanced = page.nextKeyMarker != keyMarker || page.nextUploadMarker != uploadMarker
                keyMarker = page.nextKeyMarker
                uploadMarker = page.nextUploadMarker
                finished = !page.isTruncated || keyMarker == nil || !advanced
                return page.uploads
            }
        }
    }

    func uploadsPage(prefix: String, keyMarker: String?, uploadMarker: String?, path remote: String) async throws -> UploadsPage {
        var query: [(String, String)] = [("uploads", "")]
        if !prefix.isEmpty { query.append(("prefix", prefix)) }
        if let keyMarker { query.append(("key-marker", keyMarker)) }
        if let uploadMarker { query.append(("upload-id-marker", uploadMarker)) }
        let document = try await sendXML("GET", key: nil, query: query, path: remote)
        var page = UploadsPage()
        for record in document.records(named: "Upload") {
            guard let key = record.values["Key"], let id = record.values["UploadId"], !id.isEmpty else { continue }
            page.uploads.append((key, id, record.values["Initiated"].flatMap(InternetDate.rfc3339)))
        }
        page.isTruncated = document.values["IsTruncated"]?.lowercased() == "true"
        page.nextKeyMarker = document.values["NextKeyMarker"].flatMap { $0.isEmpty ? nil : $0 }
        page.nextUploadMarker = document.values["NextUploadIdMarker"].flatMap { $0.isEmpty ? nil : $0 }
        return page
    }

    /// The open upload of exactly `objectKey` this machine left with `fingerprint` and whose
    /// writer is gone (claimed in `ledger`), with its parts' sizes and ETags; `nil` when there is none.
    func resumableUpload(key objectKey: String, fingerprint: String, ledger: UploadLedger?,
                         path remote: String) async throws -> (id: String, parts: [Int: (size: Int64, etag: String)])? {
        guard let ledger else { return nil }
        var open: Set<String> = []
        var pages = 0
        for try await uploads in uploadPages(prefix: objectKey, path: remote) {
            for upload in uploads where Self.sameKey(upload.key, objectKey) { open.insert(upload.id) }
            pages += 1
            if pages == 100 { break }  // 100,000 open uploads of one key: look no further
        }
        guard !open.isEmpty, let id = try ledger.claim(remote: bucketIdentity, path: objectKey, fingerprint: fingerprint, candidates: open) else {
            return nil
        }
        var parts: [Int: (size: Int64, etag: String)] = [:]
        var marker: String?
        for _ in 0..<S3Limits.maximumParts {
            var query: [(String, String)] = [("uploadId", id)]
            if let marker { query.append(("part-number-marker", marker)) }
            let document: S3XMLDocument
            do {
                document = try await sendXML("GET", key: objectKey, query: query, path: remote)
            } catch let error as FileProviderHTTPError where error.statusCode == 404 {
                try? ledger.finish(remote: bucketIdentity, uploadID: id)
                return nil  // completed or aborted meanwhile
            } catch {
                // Not known now: the claim is given back, so that the next attempt of this
                // process (or the next run) can continue the upload instead of starting over.
                ledger.release(remote: bucketIdentity, uploadID: id)
                throw error
            }
            for record in document.records(named: "Part") {
                guard let number = record.values["PartNumber"].flatMap({ Int($0) }), (1...S3Limits.maximumParts).contains(number),
                      let size = record.values["Size"].flatMap({ Int64($0) }), size >= 0, let etag = record.values["ETag"] else { continue }
                parts[number] = (size, etag)
            }
            guard document.values["IsTruncated"]?.lowercased() == "true", let next = document.values["NextPartNumberMarker"], next != marker else { break }
            marker = next
        }
        return (id, parts)
    }
}
