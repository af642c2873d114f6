public import Foundation
public import GatewayCore
import GatewayS3Protocol
import GatewayTransport
import Synchronization

/// A large file of a plan written in ranges by several workers, on any machines (see
/// ``FileProviderRangedWrite``). An object cannot be written at an offset, so each range is an
/// object of its own beside the target, `.NAME.gateway-resume-KEY-rOFFSET.partial`, written as any
/// object (one `PUT`, or a multipart upload that a rerun continues). `gateway finalize` joins them
/// on the server: one multipart upload of the target whose parts are copies of the range objects
/// (`UploadPartCopy`, so no byte passes through the finalizing machine), then removes them.
///
/// Every part of an upload but the last holds at least 5 MiB, and plans cut ranges of at least
/// that. Whether the server copies parts is tried once, when the plan is made, by joining a hidden
/// 2-byte object into another; a server without `UploadPartCopy` (`rclone serve s3`) gets plans that
/// copy large files whole. Ranges that cannot be joined on the server (smaller than a part, more than
/// 10,000 parts, or a server that stopped copying parts) are streamed through the finalizing
/// process into the target instead: slower, never wrong.
///
/// The joined object has no stored MD5 (`x-amz-meta-md5`): no process saw all of its bytes. It
/// carries the write's key (`x-amz-meta-gateway-ranges`) instead, so that range objects still
/// there after a join (a run killed before it removed them) are known for leftovers of a commit
/// that happened: removed, and never joined again over the file (which would put the new file in
/// the trash as the old one).
extension S3Provider: FileProviderRangedWrite {
    public func acceptsRangedWrites(below path: String) async throws -> Bool {
        switch partCopies.load(ordering: .relaxed) {
        case 1: return true
        case 2: return false
        default: break
        }
        let probe = try await rangedWriteProbePath(below: path)
        let joined = RemotePath.temporaryPath(for: probe)
        let works: Bool
        do {
            works = try await probeJoin(probe, into: joined)
        } catch {
            try? await deleteObjects([key(probe), key(joined)], path: probe)
            throw error
        }
        try? await deleteObjects([key(probe), key(joined)], path: probe)
        partCopies.store(works ? 1 : 2, ordering: .relaxed)
        if !works { logger.notice("the server does not join objects (UploadPartCopy); plans copy large files whole", metadata: ["remote": .string(name)]) }
        return works
    }

    /// Writes "ab" to `probe`, joins it into `joined` on the server, and tells whether `joined` then reads "ab".
    private func probeJoin(_ probe: String, into joined: String) async throws -> Bool {
        _ = try await write(path: probe, from: ByteStream(data: Data("ab".utf8)), options: WriteOptions(overwrite: true))
        guard let item = try await headObject(probe) else { return false }
        let parts = [PartCopy(sourceKey: key(probe), version: nil, etag: item.versionTag, start: 0, end: 1, whole: true)]
        guard try await joinOnServer(parts, size: 2, to: joined, metadata: [(name: "Content-Type", value: "application/octet-stream")],
                                     conditions: [], progress: nil) else { return false }
        return try await contents(path: joined) == Data("ab".utf8)
    }

    public func writeRange(path: String, key: String, size: Int64, offset: Int64, length: Int64, from stream: ByteStream,
                           progress: TransferProgress?) async throws {
        let remote = try rangedWriteTarget(path, size: size, offset: offset, length: length)
        let object = Self.rangeObjectPath(of: remote, key: key, offset: offset)
        var options = WriteOptions(overwrite: true, expectedSize: length)
        options.progress = progress
        let written = try await write(path: object, from: stream, options: options)
        guard written.size == length else {
            throw FileProviderError.truncated(path: remote, reason: "the range at \(offset) holds \(written.size ?? 0) bytes of \(length)")
        }
    }

    public func rangedWriteSize(path: String, key: String) async throws -> Int64? {
        let remote = try RemotePath.normalize(path)
        let ranges = try await rangeObjects(of: remote, key: key)
        guard !ranges.isEmpty else { return nil }
        if try await joined(remote, key: key) != nil {
            // Leftovers of a commit that happened: as after the rename of a partial file elsewhere.
            await removeLeftovers(ranges, of: remote)
            return nil
        }
        return ranges.map { $0.offset + $0.size }.max()
    }

    /// The object at `remote` when a commit of the ranges under `key` made it (its
    /// `x-amz-meta-gateway-ranges`), else `nil`.
    private func joined(_ remote: String, key writeKey: String) async throws -> FileObject? {
        guard let head = try await headKey(key(remote), path: remote) else { return nil }
        return head.header(Self.rangesMetadata) == writeKey ? item(head: head, path: remote) : nil
    }

    /// The metadata naming the ranged write an object was joined from.
    static let rangesMetadata = "x-amz-meta-gateway-ranges"

    /// Deletes range objects a commit no longer needs; one that stays goes as a leftover by age.
    private func removeLeftovers(_ ranges: [RangeObject], of remote: String) async {
        do {
            try await deleteObjects(ranges.map { key($0.path) }, path: remote)
        } catch {
            logger.warning("range objects not removed; they go as leftovers", metadata: ["path": .string(remote), "error": .string("\(error)")])
        }
    }

    public func rangedWriteContents(path: String, key: String, offset: Int64, length: Int64) async throws -> Data {
        let ranges = try await rangeObjects(of: try RemotePath.normalize(path), key: key)
        guard length > 0, let range = ranges.last(where: { $0.offset <= offset }), offset < range.offset + range.size else { return Data() }
        let within = offset - range.offset
        return try await readStream(path: range.path, options: ReadOptions(offset: within, length: min(length, range.size - within),
                                                                           ifVersion: range.etag)).collect()
    }

    public func commitRanges(path: String, key: String, size: Int64, options: WriteOptions) async throws -> FileObject {
        let remote = try rangedWriteTarget(path, size: size, offset: 0, length: size)
        let ranges = try await rangeObjects(of: remote, key: key)
        if let done = try await joined(remote, key: key), done.size == size {
            await removeLeftovers(ranges, of: remote)
            return done
        }
        var end: Int64 = 0
        for range in ranges {
            guard range.offset == end else {
                throw FileProviderError.truncated(path: remote, reason: "no range was written at byte \(end) (the next starts at \(range.offset))")
            }
            end += range.size
        }
        guard end == size else { throw FileProviderError.truncated(path: remote, reason: "the ranges hold \(end) bytes of \(size)") }
        var joinedOnServer = false
        var streamed = options
        if let parts = joinParts(of: ranges), partCopies.load(ordering: .relaxed) != 2 {
            if !options.overwrite, try await itemIfPresent(path: remote) != nil { throw existsError(remote) }
            try await options.beforeReplacing?(remote)
            streamed.beforeReplacing = nil  // (done once)
            let conditions = options.overwrite ? [] : [(name: "If-None-Match", value: "*")]
            var unhashed = options
            unhashed.contentHashes = [:]
            let metadata = metadataHeaders(unhashed, multipart: true) + [(name: Self.rangesMetadata, value: key)]
            joinedOnServer = try await joinOnServer(parts, size: size, to: remote, metadata: metadata, conditions: conditions, progress: nil)
        }
        if !joinedOnServer {
            logger.debug("ranges streamed into the file", metadata: ["path": .string(remote), "ranges": .stringConvertible(ranges.count)])
            streamed.expectedSize = size
            streamed.contentHashes = [:]
            _ = try await write(path: remote, from: joinedStream(ranges, size: size), options: streamed)
        }
        guard let stored = try await headObject(remote), stored.size == size else {
            throw FileProviderError.truncated(path: remote, reason: "the joined object does not hold \(size) bytes")
        }
        await removeLeftovers(ranges, of: remote)
        return stored
    }

    public func discardRanges(path: String, key: String) async throws {
        let remote = try RemotePath.normalize(path)
        let ranges = try await rangeObjects(of: remote, key: key)
        guard !ranges.isEmpty else { return }
        try await deleteObjects(ranges.map { self.key($0.path) }, path: remote)
    }

    // MARK: Range objects

    /// One range object: where its bytes go in the file, how many, and its ETag.
    struct RangeObject: Sendable {
        var path: String
        var offset: Int64
        var size: Int64
        var etag: String?
    }

    /// The object holding the range at `offset` of `remote`'s ranged write under `key`:
    /// `.NAME.gateway-resume-KEY-rOFFSET.partial` (a resumable partial file by its name, so
    /// leftovers go as those do).
    static func rangeObjectPath(of remote: String, key: String, offset: Int64) -> String {
        rangePathStem(of: remote, key: key) + String(offset) + ".partial"
    }

    /// The path every range object of `remote` under `key` starts with (`…-r`).
    private static func rangePathStem(of remote: String, key: String) -> String {
        String(RemotePath.resumablePath(for: remote, key: key).dropLast(".partial".count)) + "-r"
    }

    /// The range objects of `remote` under `key`, by offset (one `ListObjectsV2` of their prefix).
    func rangeObjects(of remote: String, key writeKey: String) async throws -> [RangeObject] {
        let stem = Self.rangePathStem(of: remote, key: writeKey)
        let prefix = key(stem)
        var ranges: [RangeObject] = []
        for try await page in objectPages(below: prefix, path: remote) {
            for object in page {
                guard let rest = Self.remainder(of: object.key, after: prefix), rest.hasSuffix(".partial") else { continue }
                let digits = rest.dropLast(".partial".count)
                guard !digits.isEmpty, digits.utf8.count <= 19, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
                      let offset = Int64(digits), String(offset) == digits, object.size >= 0, object.size <= Int64.max - offset else { continue }
                ranges.append(RangeObject(path: stem + digits + ".partial", offset: offset, size: object.size, etag: object.etag))
            }
        }
        return ranges.sorted { $0.offset < $1.offset }
    }

    /// The parts a server-side join of `ranges` copies: each range whole, or in equal pieces where
    /// it is over 5 GiB; `nil` when S3's part rules can't be met (a part but the last under
    /// 5 MiB, more than 10,000 parts).
    func joinParts(of ranges: [RangeObject]) -> [PartCopy]? {
        var parts: [PartCopy] = []
        let largest = Int64(S3Limits.maximumPartSize)
        for range in ranges where range.size > 0 {
            let count = range.size / largest + (range.size % largest == 0 ? 0 : 1)
            guard count <= Int64(S3Limits.maximumParts) else { return nil }
            let piece = range.size / count + (range.size % count == 0 ? 0 : 1)
            var start: Int64 = 0
            while start < range.size {
                let end = min(start + piece, range.size) - 1
                parts.append(PartCopy(sourceKey: key(range.path), version: nil, etag: range.etag, start: start, end: end, whole: count == 1))
                start = end + 1
            }
        }
        guard !parts.isEmpty, parts.count <= S3Limits.maximumParts,
              parts.dropLast().allSatisfy({ $0.end - $0.start + 1 >= Int64(S3Limits.minimumPartSize) }) else { return nil }
        return parts
    }

    /// The range objects' bytes one after another, each read at the version listed.
    private func joinedStream(_ ranges: [RangeObject], size: Int64) -> ByteStream {
        ByteStream.concatenating(ranges.count, expectedLength: size) { [self] index in
            let range = ranges[index]
            return try await readStream(path: range.path, options: ReadOptions(ifVersion: range.etag))
                .exactly(range.size, path: range.path, what: "a range object")
        }
    }
}
