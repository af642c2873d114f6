import Crypto
import Foundation
public import GatewayCore
import GatewayS3Protocol
import GatewayTransport

extension S3Provider {
    /// Stores a directory marker (an empty object `folder/`) with `directory_markers` (the
    /// default); without, nothing is stored and the folder exists once something is written in it.
    public func createFolder(path: String, withIntermediateDirectories: Bool) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw existsError(remote) }
        if try await headObject(remote) != nil { throw existsError(remote) }
        if try await folderExists(remote) {
            if withIntermediateDirectories { return }
            throw existsError(remote)
        }
        let parent = RemotePath.parent(of: remote)
        if !withIntermediateDirectories, parent != "/", configuration.directoryMarkers {
            if try await headObject(parent) != nil { throw CocoaError.posix(ENOTDIR, path: parent, remote: name, writing: true) }
            guard try await folderExists(parent) else { throw notFound(parent) }
        }
        guard configuration.directoryMarkers else { return }
        try await storeMarker(remote)
    }

    public func removeItem(path: String, recursive: Bool) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw CocoaError.posix(EPERM, path: remote, remote: name, writing: true) }
        if try await headObject(remote) != nil {
            try await deleteObject(key(remote), path: remote)
            try await keepParent(of: remote)
            return
        }
        let prefix = folderPrefix(remote)
        var any = false
        for try await objects in objectPages(below: prefix, path: remote) {
            for object in objects {
                any = true
                if !(Self.isMarker(object.key) && Self.sameKey(Self.markedPrefix(object.key), prefix)), !recursive { throw CocoaError.posix(ENOTEMPTY, path: remote, remote: name, writing: true) }
            }
            try await deleteObjects(objects.map(\.key), path: remote)
        }
        if !any { throw notFound(remote) }
        try await keepParent(of: remote)
    }

    /// With directory markers, a folder whose last item went away stays a folder (a marker is
    /// stored for it), as on a file system.
    func keepParent(of remote: String) async throws {
        let parent = RemotePath.parent(of: remote)
        guard configuration.directoryMarkers, parent != "/", try await !folderExists(parent) else { return }
        try await storeMarker(parent)
    }

    /// Deletes one object; a missing one is not an error (S3 answers 204 either way).
    func deleteObject(_ objectKey: String, path remote: String) async throws {
        let (head, body) = try await send("DELETE", key: objectKey, path: remote)
        guard head.isSuccess || head.status == 404 else { throw failure(head, body: body, path: remote) }
    }

    /// Deletes objects: 1,000 a request with `DeleteObjects` (quiet: only failures come back);
    /// one `DELETE` each, up to 8 at once, where the server lacks it (501, learned once) and for
    /// keys XML cannot carry (control characters). Children before their markers.
    func deleteObjects(_ keys: [String], path remote: String) async throws {
        try await deleteObjects(keys.map { ObjectVersion(key: $0, version: nil) }, path: remote)
    }

    /// One object, or one version of it (a version, or a delete marker, removed for good).
    struct ObjectVersion: Sendable {
        var key: String
        var version: String?
    }

    /// Deletes objects, and versions of objects, as the keys-only `deleteObjects(_:path:)` does
    /// (`DeleteObjects` carries a `VersionId` per object; one at a time, `DELETE ?versionId=`).
    func deleteObjects(_ objects: [ObjectVersion], path remote: String) async throws {
        var ordered = objects.sorted { $0.key.utf8.count > $1.key.utf8.count }
        if batchDeletes.load(ordering: .relaxed) != Self.batchDeletesMissing {
            let (plain, awkward) = ordered.reduce(into: ([ObjectVersion](), [ObjectVersion]())) { split, object in
                if object.key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { split.1.append(object) } else { split.0.append(object) }
            }
            var start = 0
            while start < plain.count {
                let batch = plain[start..<min(start + 1000, plain.count)]
                guard try await deleteBatch(batch, path: remote) else { break }
                start += batch.count
            }
            ordered = Array(plain[start...]) + awkward
        }
        try await ordered.concurrentForEach(width: 8) { [self] object in
            if let version = object.version {
                try await deleteVersion(object.key, version: version, path: remote)
            } else {
                try await deleteObject(object.key, path: remote)
            }
        }
    }

    /// Copies an object too large for `CopyObject` with `UploadPartCopy`, parts of
    /// `copyPartSize` (4 at once), keeping its metadata (read by a `HEAD`: `x-amz-meta-*`, the
    /// type). `false`, with nothing left behind, where the server does not implement it.
    func copyInParts(from source: String, item: FileObject, size: Int64, to destination: String,
                     progress: TransferProgress?, sourceVersion: String?) async throws -> Bool {
        let versionQuery = sourceVersion.map { [("versionId", $0)] } ?? []
        let (head, body) = try await send("HEAD", key: key(source), query: versionQuery, path: source)
        guard head.isSuccess else { throw failure(head, body: body, path: source) }
        let etag = head.header("etag")
        if let expected = item.versionTag, let etag, etag != expected {
            throw FileProviderError.versionMismatch(path: source, expected: expected, actual: etag)
        }
        var metadata: [(name: String, value: String)] = head.headers.filter { $0.key.lowercased().hasPrefix("x-amz-meta-") }
            .sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        metadata.append((name: "Content-Type", value: head.header("content-type") ?? "application/octet-stream"))
        if let storageClass = configuration.storageClass { metadata.append((name: "x-amz-storage-class", value: storageClass)) }
        // Parts large enough for 10,000 to hold the object (divided first: no overflow).
        let parts = Int64(S3Limits.maximumParts)
        let partSize = max(configuration.copyPartSize, size / parts + (size % parts == 0 ? 0 : 1))
        let count = Int(size / partSize + (size % partSize == 0 ? 0 : 1))
        let pieces = (0..<max(count, 1)).map { index in
            let start = Int64(index) * partSize
            return PartCopy(sourceKey: key(source), version: sourceVersion, etag: etag, start: start, end: min(start + partSize, size) - 1,
                            whole: count == 1)
        }
        return try await joinOnServer(pieces, size: size, to: destination, metadata: metadata, conditions: [], progress: progress)
    }

    /// One part of a multipart upload copied on the server from bytes `start...end` of another
    /// object (`UploadPartCopy`): `sourceKey` at `version` (or the current one), while its ETag is
    /// `etag`. `whole`: the part is the whole source, sent without `x-amz-copy-source-range` (which
    /// AWS takes only for sources over 5 MB).
    struct PartCopy: Sendable {
        var sourceKey: String
        var version: String?
        var etag: String?
        var start: Int64
        var end: Int64
        var whole = false
    }

    /// Makes `destination` from `parts` (in order) with one multipart upload whose parts the server
    /// copies (4 at once), started with `metadata` and completed under `conditions`. `false`, with
    /// nothing left behind, where the server does not implement `UploadPartCopy` or made an object
    /// of another size than `size`.
    func joinOnServer(_ parts: [PartCopy], size: Int64, to destination: String, metadata: [(name: String, value: String)],
                      conditions: [(name: String, value: String)], progress: TransferProgress?) async throws -> Bool {
        let targetKey = key(destination)
        let created = try await sendXML("POST", key: targetKey, query: [("uploads", "")], headers: metadata, path: destination)
        guard let uploadID = created.values["UploadId"], !uploadID.isEmpty else {
            throw FileProviderError.malformedResponse(path: destination, detail: "the server's answer to CreateMultipartUpload holds no UploadId")
        }
        do {
            let etags = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                var etags: [Int: String] = [:]
                for (index, part) in parts.enumerated() {
                    let number = index + 1
                    if number > 4, let (done, tag) = try await group.next() { etags[done] = tag }
                    group.addTask { [self] in
                        var headers = [(name: "x-amz-copy-source", value: copySourceValue(key: part.sourceKey, version: part.version))]
                        if !part.whole { headers.append((name: "x-amz-copy-source-range", value: "bytes=\(part.start)-\(part.end)")) }
                        if let etag = part.etag { headers.append((name: "x-amz-copy-source-if-match", value: etag)) }
                        let answer = try await sendXML("PUT", key: targetKey, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                                                       headers: headers, path: destination)
                        guard let tag = answer.values["ETag"], !tag.isEmpty else {
                            throw FileProviderError.malformedResponse(path: destination, detail: "the server's answer to UploadPartCopy \(number) has no ETag")
                        }
                        progress?.addBytes(part.end - part.start + 1)
                        return (number, tag)
                    }
                }
                while let (done, tag) = try await group.next() { etags[done] = tag }
                return (1...parts.count).compactMap { etags[$0] }
            }
            _ = try await completeUpload(key: targetKey, uploadID: uploadID, etags: etags, conditions: conditions, path: destination)
        } catch {
            await abortUpload(key: targetKey, uploadID: uploadID, path: destination)
            // 501, or 411 from a server that takes the part for an upload without a body
            // (`rclone serve s3`): no UploadPartCopy there.
            if let error = error as? FileProviderHTTPError,
               [501, 411].contains(error.statusCode) || error.serverText?.hasPrefix("NotImplemented") == true {
                logger.debug("UploadPartCopy not supported; copied through this process instead", metadata: ["path": .string(destination)])
                partCopies.store(2, ordering: .relaxed)
                return false
            }
            throw error
        }
        // A server that took the parts for uploads of their own (empty) bodies made a short object:
        // never reported as a copy.
        let copied = try await headObject(destination)
        guard copied?.size == size else {
            logger.notice("UploadPartCopy made an object of the wrong size; copied through this process instead",
                          metadata: ["path": .string(destination), "size": .stringConvertible(copied?.size ?? -1)])
            try await deleteObject(targetKey, path: destination)
            partCopies.store(2, ordering: .relaxed)
            return false
        }
        partCopies.store(1, ordering: .relaxed)
        return true
    }

    /// `batchDeletes` once a server answered `DeleteObjects` with 501.
    static let batchDeletesMissing = 2

    /// One `DeleteObjects` request; `false` (and nothing deleted) where the server does not
    /// implement it. A key the server could not delete fails the whole call, naming the key.
    private func deleteBatch(_ objects: ArraySlice<ObjectVersion>, path remote: String) async throws -> Bool {
        var xml = "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
        for object in objects {
            xml += "<Object><Key>\(Self.xmlEscaped(object.key))</Key>"
                + (object.version.map { "<VersionId>\(Self.xmlEscaped($0))</VersionId>" } ?? "") + "</Object>"
        }
        xml += "</Delete>"
        let body = Data(xml.utf8)
        // (Content-MD5 is required for DeleteObjects, signed or not.)
        let headers = [(name: "Content-Type", value: "application/xml"),
                       (name: "Content-MD5", value: Data(Insecure.MD5.hash(data: body)).base64EncodedString())]
        let (head, data) = try await send("POST", key: nil, query: [("delete", "")], headers: headers, body: .data(body), path: remote,
                                          maxBodySize: 16 << 20)
        if Self.notImplemented(head, data) {
            logger.debug("DeleteObjects not supported; deleting one key at a time", metadata: ["remote": .string(name)])
            batchDeletes.store(Self.batchDeletesMissing, ordering: .relaxed)
            return false
        }
        guard head.isSuccess else { throw failure(head, body: data, path: remote) }
        let document = try document(data, answering: "POST", path: remote)
        // (A key or version already gone is deleted, as a single DELETE would say.)
        if let failed = document.records(named: "Error").first(where: { !["NoSuchKey", "NoSuchVersion"].contains($0.values["Code"] ?? "") }) {
            let key = failed.values["Key"] ?? ""
            let code = failed.values["Code"] ?? "InternalError"
            throw FileProviderHTTPError(statusCode: Self.status(ofCode: code), path: remotePath(ofKey: key) ?? remote,
                                        serverText: "\(code)\(failed.values["Message"].map { ": \($0)" } ?? "")", method: "POST")
        }
        batchDeletes.store(1, ordering: .relaxed)
        return true
    }

    /// `CopyObject` of one object with its metadata; over 5 GiB, a multipart upload whose parts the
    /// server copies (`UploadPartCopy`); streamed through this process only where the server has
    /// no `UploadPartCopy`.
    ///
    /// `sourceVersion` copies that version of the source (a versioned bucket's older version,
    /// restored by undo) rather than the current one.
    func copyObject(from source: String, item: FileObject, to destination: String, progress: TransferProgress?,
                    sourceVersion: String? = nil) async throws {
        if let size = item.size, size > configuration.copyCutoff {
            if try await copyInParts(from: source, item: item, size: size, to: destination, progress: progress, sourceVersion: sourceVersion) { return }
            if sourceVersion != nil {
                throw FileProviderError.unsupported(operation: "copying an older version over \(configuration.copyCutoff) bytes without UploadPartCopy", path: source)
            }
            // (A listed item has no stored time or MD5: a HEAD has.)
            let item = item.sourceStamp == nil ? try await headObject(source) ?? item : item
            var options = WriteOptions()
            options.modificationDate = item.sourceStamp?.modificationDate
            options.contentHashes = item.hashes
            options.progress = progress
            _ = try await write(path: destination, from: try await readStream(path: source, options: ReadOptions(ifVersion: item.versionTag)), options: options)
            return
        }
        try await copyObjectRequest(from: key(source), version: sourceVersion, ifETag: item.versionTag, to: key(destination), path: destination)
        progress?.addBytes(item.size ?? 0)
    }

    /// One `CopyObject`: `sourceKey` (its version `version`, or the current one; only while its
    /// ETag is `etag`, when given) to `targetKey`, in the configured storage class.
    func copyObjectRequest(from sourceKey: String, version: String?, ifETag etag: String?, to targetKey: String, path remote: String) async throws {
        var headers: [(name: String, value: String)] = [(name: "x-amz-copy-source", value: copySourceValue(key: sourceKey, version: version))]
        if let etag { headers.append((name: "x-amz-copy-source-if-match", value: etag)) }
        if let storageClass = configuration.storageClass { headers.append((name: "x-amz-storage-class", value: storageClass)) }
        _ = try await sendXML("PUT", key: targetKey, headers: headers, path: remote)
    }

    /// `x-amz-copy-source`: `/BUCKET/KEY`, URI-encoded, with `?versionId=` for an older version.
    func copySourceValue(key sourceKey: String, version: String?) -> String {
        "/" + S3URIEncoding.encode(configuration.bucket) + "/" + S3URIEncoding.encode(sourceKey, keepingSlashes: true)
            + (version.map { "?versionId=" + S3URIEncoding.encode($0) } ?? "")
    }

    public func copyItem(path: String, to destination: String, overwrite: Bool, progress: TransferProgress?) async throws {
        try await copyTree(from: try RemotePath.normalize(path), to: try RemotePath.normalize(destination), overwrite: overwrite,
                           removingSource: false, progress: progress)
    }

    /// Copy and delete: S3 has no rename.
    public func moveItem(path: String, to destination: String, overwrite: Bool) async throws {
        try await copyTree(from: try RemotePath.normalize(path), to: try RemotePath.normalize(destination), overwrite: overwrite,
                           removingSource: true, progress: nil)
    }

    /// Copies a file, or a folder's every key, server-side; then removes the source when moving.
    private func copyTree(from source: String, to destination: String, overwrite: Bool, removingSource: Bool, progress: TransferProgress?) async throws {
        guard try RemotePath.checkTransfer(from: source, to: destination, moving: removingSource) else { return }
        let item = try await attributesOfItem(path: source)
        if let existing = try await itemIfPresent(path: destination) {
            guard overwrite else { throw existsError(destination) }
            if existing.isDirectory != item.isDirectory {
                throw CocoaError.posix(existing.isDirectory ? EISDIR : ENOTDIR, path: destination, remote: name, writing: true)
            }
            if existing.isDirectory { try await removeItem(path: destination, recursive: true) }
        }
        guard item.isDirectory else {
            let object = try await headObject(source) ?? item
            try await copyObject(from: source, item: object, to: destination, progress: progress)
            if removingSource {
                try await deleteObject(key(source), path: source)
                try await keepParent(of: source)
            }
            return
        }
        let sourcePrefix = folderPrefix(source)
        let destinationPrefix = folderPrefix(destination)
        // A page at a time, up to 8 copies at once; when moving, a page's sources are deleted once
        // all of its objects are copied (an interrupted move leaves each object in one place or both).
        for try await objects in objectPages(below: sourcePrefix, path: source) {
            var copied: [String] = []
            try await withThrowingTaskGroup(of: Void.self) { group in
                var slots = TaskSlots(width: 8)
                for object in objects {
                    let marker = Self.isMarker(object.key)
                    let sourceKey = marker ? Self.markedPrefix(object.key) : object.key
                    guard let below = Self.remainder(of: sourceKey, after: sourcePrefix), let from = remotePath(ofKey: sourceKey),
                          let to = remotePath(ofKey: destinationPrefix + below) else { skipped(object.key); continue }
                    try await slots.add({ [self] in
                        if marker {
                            if to != "/" { try await storeMarker(to) }
                        } else {
                            try await copyObject(from: from, item: self.item(object, path: from), to: to, progress: progress)
                        }
                    }, to: &group)
                    copied.append(object.key)
                }
                try await group.waitForAll()
            }
            if removingSource { try await deleteObjects(copied, path: source) }
        }
        if removingSource {
            try await keepParent(of: source)
        }
    }
}
