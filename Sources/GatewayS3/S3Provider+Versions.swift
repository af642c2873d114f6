import Foundation
import GatewayCore
import GatewayS3Protocol
import GatewayTransport

/// Object versions, for undo on a bucket that keeps them (``S3VersionTrashVolume``): whether the
/// bucket does, an object's current version, every version below a prefix, removing one version
/// for good, and the delete markers nothing is left behind.
extension S3Provider {
    /// Whether the bucket keeps every version of its objects (`GetBucketVersioning` says
    /// `Enabled`).
    func bucketKeepsVersions() async throws -> Bool {
        try await bucketVersioning() == .enabled
    }

    /// The bucket's versioning, asked once per provider. A server that refuses the question (no
    /// permission, not implemented) or answers something else is taken as never versioned.
    func bucketVersioning() async throws -> S3BucketVersioning {
        let states: [S3BucketVersioning] = [.enabled, .suspended, .off]
        let known = versioning.load(ordering: .relaxed)
        if known > 0 { return states[known - 1] }
        let (head, body) = try await send("GET", key: nil, query: [("versioning", "")], path: "/")
        var state = S3BucketVersioning.off
        if head.isSuccess, let document = try? S3XMLDocument.parse(body), let answer = S3BucketVersioning(document) {
            state = answer
        } else {
            logger.debug("the bucket's versioning could not be read; undo uses the trash prefix",
                         metadata: ["remote": .string(name), "status": .stringConvertible(head.status)])
        }
        versioning.store((states.firstIndex(of: state) ?? 2) + 1, ordering: .relaxed)
        return state
    }

    /// The object at `remote` and its current version id (`null` for an object stored before
    /// versioning was turned on), or `nil` when there is none.
    func headVersion(_ remote: String) async throws -> (item: FileObject, version: String)? {
        guard remote != "/" else { return nil }
        let (head, body) = try await send("HEAD", key: key(remote), path: remote)
        if head.status == 404 { return nil }
        guard head.isSuccess else { throw failure(head, body: body, path: remote) }
        let version = head.header("x-amz-version-id").flatMap { $0.isEmpty ? nil : $0 } ?? "null"
        return (item(head: head, path: remote), version)
    }

    /// Every version and delete marker of every key starting with `prefix`, a page of up to 1,000
    /// at a time (`ListObjectVersions`, paged by key and version-id markers).
    func versionPages(below prefix: String, path remote: String) -> PullSequence<[S3VersionsPage.Version]> {
        PullSequence { [self] in
            var marker: (key: String, version: String?)?
            var finished = false
            return {
                guard !finished else { return nil }
                var query: [(String, String)] = [("versions", ""), ("encoding-type", "url"), ("max-keys", "1000")]
                if !prefix.isEmpty { query.append(("prefix", prefix)) }
                if let marker {
                    query.append(("key-marker", marker.key))
                    if let version = marker.version { query.append(("version-id-marker", version)) }
                }
                query.sort { $0.0 < $1.0 }
                let document = try await self.sendXML("GET", key: nil, query: query, path: remote)
                let page: S3VersionsPage
                do {
                    page = try S3VersionsPage(document)
                } catch {
                    throw FileProviderError.malformedResponse(path: remote, detail: "invalid version listing from the server: \(error)")
                }
                if page.isTruncated, let key = page.nextKeyMarker {
                    // The same markers again would list the same page forever.
                    if let marker, marker.key == key, marker.version == page.nextVersionIDMarker {
                        throw FileProviderError.malformedResponse(path: remote, detail: "the version listing is truncated but gives no new marker")
                    }
                    marker = (key, page.nextVersionIDMarker)
                } else {
                    finished = true
                }
                return page.versions
            }
        }
    }

    /// Removes one version of `objectKey` for good (not a delete marker: the version itself). A
    /// version already gone is not an error.
    func deleteVersion(_ objectKey: String, version: String, path remote: String) async throws {
        let (head, body) = try await send("DELETE", key: objectKey, query: [("versionId", version)], path: remote)
        guard head.isSuccess || head.status == 404 else { throw failure(head, body: body, path: remote) }
    }

    /// Removes the delete markers of each key below `prefix` (of `prefix` itself only, with
    /// `exactKey`) that has no version with content left: such a key is gone either way, and its
    /// markers are all that still lists it (moto rolls them into common prefixes) and costs. A key
    /// with any other version keeps its markers, which hide that version. 1,000 a request
    /// (`DeleteObjects` with version ids); returns how many went. A listing whose keys
    /// are not in order fails, removing nothing more.
    @discardableResult
    func removeLoneDeleteMarkers(below prefix: String, exactKey: Bool, path remote: String) async throws -> Int {
        var key: String?
        var markers: [String] = []
        var hasContent = false
        var doomed: [ObjectVersion] = []
        var removed = 0
        func flush() async throws {
            let batch = doomed
            doomed = []
            try await deleteObjects(batch, path: remote)
            removed += batch.count
        }
        // A key's versions come together (ListObjectVersions lists by key, in UTF-8 order), so
        // a key is settled when the next one starts.
        func settle() async throws {
            if let key, !hasContent { doomed += markers.map { ObjectVersion(key: key, version: $0) } }
            if doomed.count >= 1000 { try await flush() }
        }
        for try await page in versionPages(below: prefix, path: remote) {
            for version in page where !exactKey || version.key == prefix {
                if version.key != key {
                    if let key, !key.utf8.lexicographicallyPrecedes(version.key.utf8) {
                        throw FileProviderError.malformedResponse(path: remote, detail: "the version listing is not in key order")
                    }
                    try await settle()
                    (key, markers, hasContent) = (version.key, [], false)
                }
                if !version.isDeleteMarker {
                    hasContent = true
                } else if markers.count < 1_000 {
                    markers.append(version.versionID)
                }
            }
        }
        try await settle()
        try await flush()
        return removed
    }

    /// Copies the version `version` of `sourceKey` to `targetKey` on the server (`CopyObject`; in
    /// parts over the copy cutoff), making it the target's current version.
    func copyVersion(_ sourceKey: String, version: String, size: Int64, to targetKey: String, path remote: String) async throws {
        if size > configuration.copyCutoff {
            // The parts are copied by path: a key no path names cannot take that way.
            guard let source = remotePath(ofKey: sourceKey), let target = remotePath(ofKey: targetKey) else {
                throw FileProviderError.unsupported(operation: "restoring an object over \(configuration.copyCutoff) bytes whose key no path names", path: remote)
            }
            try await copyObject(from: source, item: FileObject(path: source, type: .file, size: size), to: target, progress: nil,
                                 sourceVersion: version)
            return
        }
        try await copyObjectRequest(from: sourceKey, version: version, ifETag: nil, to: targetKey, path: remote)
    }
}
