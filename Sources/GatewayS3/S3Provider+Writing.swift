import Crypto
import Foundation
public import GatewayCore
import GatewayS3Protocol
import GatewayState
import GatewayTransport

extension S3Provider {
    /// Writes an object: bytes up to the part size go in one `PUT`, larger ones as a multipart upload
    /// (parts uploaded `upload_concurrency` at a time, each held in memory once). An object appears
    /// only whole, when its `PUT` or `CompleteMultipartUpload` succeeds, so every write is atomic
    /// without a temporary name. A failed multipart upload is aborted.
    ///
    /// Every body is signed (its SHA-256 in the signature) or, unsigned over TLS, carries
    /// `Content-MD5`: the server checks the bytes it stores. The writer's time goes into
    /// `x-amz-meta-mtime` and a known MD5 of a multipart object into `x-amz-meta-md5` (as rclone
    /// writes them). `overwrite: false` sends `If-None-Match: *` and ``WriteOptions/ifVersion``
    /// `If-Match`, where the server supports them, besides the look-up beforehand.
    public func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        let remote = try await AtomicWrite.checkTarget(path, options: options, remote: name) { try await itemIfPresent(path: $0) }
        let objectKey = key(remote)
        let (counted, counter) = AtomicWrite.counting(stream, progress: options.progress)
        let expected = options.expectedSize ?? stream.expectedLength
        var partSize = configuration.partSize
        if let expected, expected > Int64(partSize) * Int64(S3Limits.maximumParts) {
            // Parts large enough for 10,000 to hold the file, in whole MiB.
            // (Divided first: a hostile source's size near Int64.max must not trap.)
            let parts = Int64(S3Limits.maximumParts)
            let needed = expected / parts + (expected % parts == 0 ? 0 : 1)
            partSize = Int(min(Int64(S3Limits.maximumPartSize), ((needed + (1 << 20) - 1) >> 20) << 20))
        }
        let reader = PartReader(counted, partSize: partSize, expectedSize: expected)
        var conditions: [(name: String, value: String)] = []
        if !options.overwrite { conditions.append((name: "If-None-Match", value: "*")) }
        if let version = options.ifVersion { conditions.append((name: "If-Match", value: version)) }
        let head: HTTPResponseHead
        if let whole = try await reader.onlyPart() {
            try AtomicWrite.checkLength(Int64(whole.count), expected: expected, path: remote)
            try await options.beforeReplacing?(remote)
            head = try await putObject(whole, key: objectKey, headers: metadataHeaders(options, multipart: false), conditions: conditions, path: remote)
        } else {
            head = try await multipartUpload(reader: reader, key: objectKey, options: options, conditions: conditions,
                                             expected: expected, counter: counter, path: remote)
        }
        let written = counter.value
        if options.returnsStoredAttributes {
            guard let stored = try await headObject(remote) else {
                throw FileProviderError.truncated(path: remote, reason: "the server answered the upload, yet has no object under the name")
            }
            guard stored.size == written else {
                throw FileProviderError.truncated(path: remote, reason: "the server holds \(stored.size ?? 0) bytes after \(written) were sent")
            }
            return stored
        }
        return FileObject(path: remote, type: .file, size: written, modificationDate: options.modificationDate ?? Date(),
                          versionTag: head.header("etag"))
    }

    /// The headers every new object gets: its type, the writer's time and (multipart) MD5, the storage class.
    func metadataHeaders(_ options: WriteOptions, multipart: Bool) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [(name: "Content-Type", value: "application/octet-stream")]
        if let date = options.modificationDate { headers.append((name: "x-amz-meta-mtime", value: Self.formatMtime(date))) }
        if multipart, let md5 = options.contentHashes[.md5]?.lowercased(), md5.utf8.count == 32, md5.allSatisfy(\.isHexDigit) {
            headers.append((name: "x-amz-meta-md5", value: md5))
        }
        if let storageClass = configuration.storageClass { headers.append((name: "x-amz-storage-class", value: storageClass)) }
        return headers
    }

    /// What a multipart upload is started with (its metadata headers and part size), as the
    /// ``UploadLedger`` compares it: only a write with the same fingerprint continues an upload.
    func uploadFingerprint(_ metadata: [(name: String, value: String)], partSize: Int) -> String {
        let lines = metadata.map { "\($0.name.lowercased()):\($0.value)" } + ["part-size:\(partSize)"]
        return Self.md5Hex(Data(lines.joined(separator: "\n").utf8))
    }

    /// `Content-MD5` for a body that is not signed (the signature covers a signed one).
    func integrityHeaders(_ data: Data) -> [(name: String, value: String)] {
        guard !configuration.signsPayloads else { return [] }
        return [(name: "Content-MD5", value: Data(Insecure.MD5.hash(data: data)).base64EncodedString())]
    }

    /// One `PUT` of a whole object.
    func putObject(_ data: Data, key objectKey: String, headers: [(name: String, value: String)], conditions: [(name: String, value: String)],
                   path remote: String) async throws -> HTTPResponseHead {
        var conditions = conditions
        while true {
            let (head, body) = try await send("PUT", key: objectKey, headers: headers + integrityHeaders(data) + conditions, body: .data(data), path: remote)
            if head.isSuccess { return head }
            if !conditions.isEmpty, Self.notImplemented(head, body) {
                // A server without conditional writes: the look-up before the write checked already.
                logger.debug("conditional PUT not supported; sent without", metadata: ["path": .string(remote)])
                conditions = []
                continue
            }
            throw conditionalFailure(head, body: body, path: remote, conditions: conditions)
        }
    }

    /// Whether an answer says the server does not implement what was asked (501 NotImplemented):
    /// conditional headers (rather than finding a condition false), `DeleteObjects`.
    static func notImplemented(_ head: HTTPResponseHead, _ body: Data) -> Bool {
        head.status == 501 || S3ErrorBody(body)?.code == "NotImplemented"
    }

    /// The error of a failed write: a false `If-None-Match: *` is "already exists".
    func conditionalFailure(_ head: HTTPResponseHead, body: Data, path remote: String, conditions: [(name: String, value: String)]) -> any Error {
        if head.status == 412 || S3ErrorBody(body)?.code == "PreconditionFailed" {
            if conditions.contains(where: { $0.name == "If-None-Match" }) { return existsError(remote) }
            return FileProviderError.versionMismatch(path: remote, expected: conditions.first { $0.name == "If-Match" }?.value ?? "", actual: nil)
        }
        return failure(head, body: body, path: remote)
    }

    /// A multipart upload of the parts read from `reader`, sent
    /// `upload_concurrency` at a time, then completed (or aborted on any failure).
    func multipartUpload(reader: PartReader, key objectKey: String, options: WriteOptions, conditions: [(name: String, value: String)],
                         expected: Int64?, counter: AtomicWrite.ByteCount, path remote: String) async throws -> HTTPResponseHead {
        // An upload of this key left open by an interrupted writer on this machine, started with
        // the same metadata, is continued (UploadLedger): each of its parts whose size and MD5
        // match the part read now is kept, not sent again.
        let metadata = metadataHeaders(options, multipart: true)
        let fingerprint = uploadFingerprint(metadata, partSize: reader.partSize)
        let ledger = try? UploadLedger.open(directory: stateDirectory)
        // An upload that may be there but could not be listed now (a server slow to answer) is
        // not replaced by a new one: the transient error goes to the caller's retry, which looks
        // again. (Starting over would send every part again.)
        let resumed: (id: String, parts: [Int: (size: Int64, etag: String)])?
        do {
            resumed = try await resumableUpload(key: objectKey, fingerprint: fingerprint, ledger: ledger, path: remote)
        } catch where error.isTransient {
            throw error
        } catch {
            logger.debug("an interrupted upload could not be looked for; starting a new one",
                         metadata: ["path": .string(remote), "error": .string(ErrorMessage.reason(for: error))])
            resumed = nil
        }
        let uploadID: String
        if let resumed {
            uploadID = resumed.id
            logger.info("continuing an interrupted multipart upload", metadata: ["path": .string(remote), "parts": .stringConvertible(resumed.parts.count)])
        } else {
            let created = try await sendXML("POST", key: objectKey, query: [("uploads", "")], headers: metadata, path: remote)
            // (AWS's root is InitiateMultipartUploadResult; rclone serve s3 says InitiateMultipartUpload.)
            guard let id = created.values["UploadId"], !id.isEmpty else {
                throw FileProviderError.malformedResponse(path: remote, detail: "the server's answer to CreateMultipartUpload holds no UploadId")
            }
            uploadID = id
            do {
                try ledger?.record(remote: bucketIdentity, path: objectKey, uploadID: id, fingerprint: fingerprint)
            } catch {
                logger.debug("upload not recorded in the state store; it cannot be continued", metadata: ["error": .string(ErrorMessage.reason(for: error))])
            }
        }
        do {
            let etags = try await uploadParts(reader: reader, key: objectKey, uploadID: uploadID, existing: resumed?.parts ?? [:], path: remote)
            try AtomicWrite.checkLength(counter.value, expected: expected, path: remote)
            try await options.beforeReplacing?(remote)
            let answer = try await completeUpload(key: objectKey, uploadID: uploadID, etags: etags, conditions: conditions, path: remote)
            try? ledger?.finish(remote: bucketIdentity, uploadID: uploadID)
            return answer
        } catch {
            // A transient failure keeps the parts sent so far: the retry (or the next run)
            // continues the upload. Anything else frees them.
            if error.isTransient {
                ledger?.release(remote: bucketIdentity, uploadID: uploadID)
            } else {
                await abortUpload(key: objectKey, uploadID: uploadID, path: remote)
                try? ledger?.finish(remote: bucketIdentity, uploadID: uploadID)
            }
            throw error
        }
    }

    /// `CompleteMultipartUpload` of the parts with `etags` (in part order); its answer, with the
    /// object's ETag. Conditions the server does not implement are dropped.
    func completeUpload(key objectKey: String, uploadID: String, etags: [String], conditions: [(name: String, value: String)],
                        path remote: String) async throws -> HTTPResponseHead {
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for (index, etag) in etags.enumerated() {
            xml += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(Self.xmlEscaped(etag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let body = Data(xml.utf8)
        var conditions = conditions
        while true {
            let (head, data) = try await send("POST", key: objectKey, query: [("uploadId", uploadID)],
                                              headers: [(name: "Content-Type", value: "application/xml")] + integrityHeaders(body) + conditions,
                                              body: .data(body), path: remote, maxBodySize: 1 << 20)
            if !head.isSuccess, !conditions.isEmpty, Self.notImplemented(head, data) { conditions = []; continue }
            guard head.isSuccess else { throw conditionalFailure(head, body: data, path: remote, conditions: conditions) }
            // (An error may come inside a 200.)
            if let error = S3ErrorBody(data) {
                throw FileProviderHTTPError(statusCode: Self.status(ofCode: error.code), path: remote,
                                            serverText: "\(error.code)\(error.message.map { ": \($0)" } ?? "")", method: "POST")
            }
            var answer = head
            if let etag = (try? S3XMLDocument.parse(data))?.values["ETag"] { answer.headers["etag"] = etag }
            return answer
        }
    }

    /// Sends every part, at most `upload_concurrency` at once; their ETags in part order.
    private func uploadParts(reader: PartReader, key objectKey: String, uploadID: String,
                             existing: [Int: (size: Int64, etag: String)], path remote: String) async throws -> [String] {
        let concurrency = max(1, min(configuration.uploadConcurrency, S3Limits.partMemoryBudget / max(reader.partSize, 1)))
        return try await withThrowingTaskGroup(of: (Int, String).self) { group in
            var etags: [Int: String] = [:]
            var number = 0
            var inFlight = 0
            var next = try await reader.next()
            while let part = next {
                number += 1
                guard number <= S3Limits.maximumParts else {
                    throw FileProviderError.unsupported(operation: "an upload of more than \(S3Limits.maximumParts) parts (raise part_size)", path: remote)
                }
                let partNumber = number
                let kept = existing[partNumber].flatMap { old in
                    old.size == Int64(part.count) && Self.md5(fromETag: old.etag) == Self.md5Hex(part) ? old.etag : nil
                }
                group.addTask { [self] in
                    if let kept { return (partNumber, kept) }
                    return (partNumber, try await uploadPart(part, number: partNumber, key: objectKey, uploadID: uploadID, path: remote))
                }
                inFlight += 1
                if inFlight >= concurrency, let (done, etag) = try await group.next() {
                    etags[done] = etag
                    inFlight -= 1
                }
                next = try await reader.next()
            }
            while let (done, etag) = try await group.next() { etags[done] = etag }
            return (1...max(number, 1)).compactMap { etags[$0] }
        }
    }

    /// One part; its ETag.
    private func uploadPart(_ data: Data, number: Int, key objectKey: String, uploadID: String, path remote: String) async throws -> String {
        let (head, body) = try await send("PUT", key: objectKey, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                                          headers: integrityHeaders(data), body: .streamed(data), path: remote)
        guard head.isSuccess else { throw failure(head, body: body, path: remote) }
        guard let etag = head.header("etag"), !etag.isEmpty else {
            throw FileProviderError.malformedResponse(path: remote, detail: "the server's answer to UploadPart \(number) has no ETag")
        }
        return etag
    }

    /// Aborts a multipart upload (its parts are freed); failures are logged, not thrown.
    func abortUpload(key objectKey: String, uploadID: String, path remote: String) async {
        do {
            let (head, _) = try await send("DELETE", key: objectKey, query: [("uploadId", uploadID)], path: remote)
            if !head.isSuccess && head.status != 404 {
                logger.warning("could not abort a multipart upload", metadata: ["path": .string(remote), "status": .stringConvertible(head.status)])
            }
        } catch {
            logger.warning("could not abort a multipart upload", metadata: ["path": .string(remote), "error": .string(ErrorMessage.reason(for: error))])
        }
    }

    /// The lower-case hex MD5 of `data`.
    static func md5Hex(_ data: Data) -> String { SigV4Signer.hex(Insecure.MD5.hash(data: data)) }

    static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// Reads a stream in parts of a fixed size, one caller at a time.
final class PartReader: @unchecked Sendable {
    private var iterator: ByteStream.AsyncIterator
    /// The size of every part but the last.
    let partSize: Int
    /// How many bytes the stream should hold, if known: a part is given room for what is left of
    /// them, not a whole part size (a 4 KiB file must not take, and give back, 8 MiB of pages).
    private let expectedSize: Int64?
    private var delivered: Int64 = 0
    private var carry = Data()
    /// The first part, kept by ``onlyPart()`` and handed out again first.
    private var returned: Data?
    private var ended = false
    private var started = false

    init(_ stream: ByteStream, partSize: Int, expectedSize: Int64? = nil) {
        self.iterator = stream.makeAsyncIterator()
        self.partSize = partSize
        self.expectedSize = expectedSize
    }

    /// Whether the stream has ended and no bytes are left.
    var finished: Bool { ended && carry.isEmpty && returned == nil }

    /// The whole stream when it fits in one part (empty data for an empty stream); `nil` when more
    /// parts follow, and then ``next()`` starts again with the first. (The reader keeps that part,
    /// not the caller: held for a whole multipart upload, it was one part buffer more than
    /// `upload_concurrency + 1`, 8 MiB of peak RSS.)
    func onlyPart() async throws -> Data? {
        let first = try await next() ?? Data()
        if finished { return first }
        returned = first
        delivered -= Int64(first.count)
        return nil
    }

    /// The next part (`partSize` bytes, or fewer for the last); `nil` when no bytes are left (the
    /// first call gives empty data for an empty stream). Knows, when a part is exactly `partSize`,
    /// whether more follows (``finished``).
    func next() async throws -> Data? {
        if let part = returned {
            returned = nil
            delivered += Int64(part.count)
            return part
        }
        if finished && started { return nil }
        started = true
        var part = carry
        carry = Data()
        var room = partSize
        if let expectedSize, expectedSize >= delivered { room = Int(min(Int64(partSize), max(expectedSize - delivered, 1))) }
        part.reserveCapacity(room)
        while part.count < partSize, !ended {
            guard let chunk = try await iterator.next() else { ended = true; break }
            part.append(chunk)
        }
        if part.count > partSize {
            carry = part.subdata(in: partSize..<part.count)
            part = part.subdata(in: 0..<partSize)
        } else if part.count == partSize, !ended {
            // Look one chunk ahead, so a stream that ends here is known to have ended.
            if let chunk = try await iterator.next() { carry = chunk } else { ended = true }
        }
        delivered += Int64(part.count)
        return part
    }
}
