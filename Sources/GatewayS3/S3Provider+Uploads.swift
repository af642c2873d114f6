import Foundation
public import GatewayCore
import GatewayS3Protocol
import GatewayTransport

/// Multipart uploads left open (a writer killed mid-upload): listed and aborted for `gateway
/// cleanup`, and continued by the next write of the same key.
extension S3Provider: FileProviderIncompleteUploads {
    public func incompleteUploads(below path: String) -> PullSequence<IncompleteUpload> {
        PullSequence { [self] in
            var keyMarker: String?
            var uploadMarker: String?
            var finished = false
            var pending: [IncompleteUpload] = []
            return {
                while pending.isEmpty {
                    if finished { return nil }
                    let remote = try RemotePath.normalize(path)
                    let prefix = remote == "/" ? self.configuration.prefix : self.key(remote)
                    let page = try await self.uploadsPage(prefix: prefix, keyMarker: keyMarker, uploadMarker: uploadMarker, path: remote)
                    for upload in page.uploads {
                        guard let uploadPath = self.remotePath(ofKey: upload.key),
                              remote == "/" || uploadPath == remote || uploadPath.hasPrefix(remote + "/") else { continue }
                        pending.append(IncompleteUpload(path: uploadPath, id: upload.id, initiated: upload.initiated))
                    }
                    keyMarker = page.nextKeyMarker
                    uploadMarker = page.nextUploadMarker
                    finished = !page.isTruncated || keyMarker == nil
                }
                return pending.removeFirst()
            }
        }
    }

    public func abortIncompleteUpload(_ upload: IncompleteUpload) async throws {
        let remote = try RemotePath.normalize(upload.path)
        let (head, body) = try await send("DELETE", key: key(remote), query: [("uploadId", upload.id)], path: remote)
        guard head.isSuccess || head.status == 404 else { throw failure(head, body: body, path: remote) }
    }

    /// One page of `ListMultipartUploads`.
    struct UploadsPage {
        var uploads: [(key: String, id: String, initiated: Date?)] = []
        var isTruncated = false
        var nextKeyMarker: String?
        var nextUploadMarker: String?
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

    /// The most recent open upload of exactly `objectKey`, with its parts' sizes and ETags, or `nil`.
    func resumableUpload(key objectKey: String, path remote: String) async throws -> (id: String, parts: [Int: (size: Int64, etag: String)])? {
        var latest: (id: String, initiated: Date?)?
        var keyMarker: String?
        var uploadMarker: String?
        for _ in 0..<100 {
            let page = try await self.uploadsPage(prefix: objectKey, keyMarker: keyMarker, uploadMarker: uploadMarker, path: remote)
            for upload in page.uploads where upload.key == objectKey {
                if latest == nil || (upload.initiated ?? .distantPast) > (latest?.initiated ?? .distantPast) { latest = (upload.id, upload.initiated) }
            }
            guard page.isTruncated, page.nextKeyMarker != nil else { break }
            keyMarker = page.nextKeyMarker
            uploadMarker = page.nextUploadMarker
        }
        guard let latest else { return nil }
        var parts: [Int: (size: Int64, etag: String)] = [:]
        var marker: String?
        for _ in 0..<S3Limits.maximumParts {
            var query: [(String, String)] = [("uploadId", latest.id)]
            if let marker { query.append(("part-number-marker", marker)) }
            let document: S3XMLDocument
            do {
                document = try await sendXML("GET", key: objectKey, query: query, path: remote)
            } catch let error as FileProviderHTTPError where error.statusCode == 404 {
                return nil  // completed or aborted meanwhile
            }
            for record in document.records(named: "Part") {
                guard let number = record.values["PartNumber"].flatMap({ Int($0) }), (1...S3Limits.maximumParts).contains(number),
                      let size = record.values["Size"].flatMap({ Int64($0) }), size >= 0, let etag = record.values["ETag"] else { continue }
                parts[number] = (size, etag)
            }
            guard document.values["IsTruncated"]?.lowercased() == "true", let next = document.values["NextPartNumberMarker"], next != marker else { break }
            marker = next
        }
        return (latest.id, parts)
    }
}
