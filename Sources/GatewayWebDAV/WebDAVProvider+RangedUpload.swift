import Foundation
public import GatewayCore
import GatewayTransport
import Synchronization

/// Large uploads as several `PUT`s with `Content-Range` at once, each on its own connection, into a
/// temporary file that is moved into place once the server reports its full size.
///
/// RFC 9110 lets a server refuse such a `PUT` (400) and some ignore the header and store the range
/// as the whole file, so every file starts with a probe: its last byte alone, sent as a range, then
/// the temporary file's size is asked for. Only a server that now reports the full size (Apache
/// mod_dav, nginx with the put-range patch) gets the ranges; any other answer means one plain `PUT`,
/// and a refusal is remembered so later files skip the probe.
extension WebDAVProvider: FileProviderSegmentedWrite {
    public func openSegmentedWrite(path: String, size: Int64, options: WriteOptions) async throws -> (any SegmentedFileWriter)? {
        // Conditional and in-place writes, and vendors whose PUT carries more than bytes (X-OC-Mtime,
        // OC-Checksum), take the plain path.
        guard rangedUploads, vendor == .other, size >= 2, options.atomically, options.ifVersion == nil,
              options.contentHashes.isEmpty, !rangedUploadsRefused.withLock({ $0 }) else { return nil }
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw CocoaError.posix(EISDIR, path: remote, remote: name, writing: true) }
        if !options.overwrite {
            let existing = try await itemIfPresent(path: remote)
            if existing?.isDirectory == true { throw CocoaError.posix(EISDIR, path: remote, remote: name, writing: true) }
            if existing != nil { throw existsError(remote) }
        }
        let target = RemotePath.parent(of: remote).appendingPathComponentRemote(RemotePath.temporaryName(for: RemotePath.lastComponent(of: remote)))
        do {
            guard try await probeRangedPut(target, size: size) else {
                await discard(target)
                return nil
            }
        } catch {
            await discard(target)
            throw error
        }
        logger.debug("uploading in ranges", metadata: ["path": .string(remote), "bytes": .stringConvertible(size)])
        return WebDAVRangedUpload(provider: self, target: target, remote: remote, size: size, options: options)
    }

    /// Sends a placeholder for the last byte of a `size`-byte file to `target` as a range, and tells
    /// whether the server stored it as one (the file now has `size` bytes).
    private func probeRangedPut(_ target: String, size: Int64) async throws -> Bool {
        let (head, _) = try await send("PUT", target, headers: [
            (name: "Content-Range", value: "bytes \(size - 1)-\(size - 1)/\(size)"),
            (name: "Content-Type", value: ""),
        ], body: .data(Data([0])))
        switch head.status {
        case 200..<300:
            let stored = try await itemIfPresent(path: target)
            if stored?.size == size { return true }
            // Stored as the whole file: the header was ignored.
            logger.info("server ignores Content-Range on PUT; large files go in one request", metadata: ["remote": .string(name)])
            rangedUploadsRefused.withLock { $0 = true }
            return false
        case 400, 405, 416, 501:
            // Refused as a kind of request; anything else (no such folder, no space, no permission)
            // is about this file, and the plain PUT that follows reports it.
            logger.info("server refuses Content-Range on PUT; large files go in one request",
                        metadata: ["remote": .string(name), "status": .stringConvertible(head.status)])
            rangedUploadsRefused.withLock { $0 = true }
            return false
        default:
            return false
        }
    }

    /// Sends `length` bytes of `stream` as the range at `offset` of the `size`-byte file `target`.
    fileprivate func putRange(_ target: String, remote: String, offset: Int64, length: Int64, size: Int64,
                              from stream: ByteStream, progress: TransferProgress?) async throws {
        let source = ExactLengthSource(stream, length: length, remote: remote, progress: progress)
        let (head, response) = try await send("PUT", target, headers: [
            (name: "Content-Range", value: "bytes \(offset)-\(offset + length - 1)/\(size)"),
        ], body: .stream(ByteStream(expectedLength: length) { try await source.next() }), requestBuffer: Self.rangeBuffer)
        guard head.isSuccess else { throw failure(head, body: response, path: remote) }
        let count = source.sent
        guard count == length else {
            throw FileProviderError.truncated(path: remote, reason: "sent \(count) of \(length) bytes of a range")
        }
    }

    /// Bytes each range may read ahead of the network: several ranges share one transfer's memory.
    static let rangeBuffer = 1 << 20

    /// Checks the assembled temporary file's size and moves it into place.
    fileprivate func finishRangedUpload(_ target: String, remote: String, size: Int64, options: WriteOptions) async throws -> FileObject {
        let stored = try await itemIfPresent(path: target)
        guard let stored, stored.size == size else {
            throw FileProviderError.truncated(path: remote, reason: "the server holds \(stored?.size.map(String.init) ?? "no") bytes of \(size); nothing was written")
        }
        try await commit(target, to: remote, overwrite: options.overwrite)
        logger.debug("wrote file in ranges", metadata: ["path": .string(remote), "bytes": .stringConvertible(size)])
        if options.returnsStoredAttributes, let stored = try? await attributesOfItem(path: remote) { return stored }
        return FileObject(path: remote, type: .file, size: size, modificationDate: nil)
    }
}

/// Exactly `length` bytes of a stream, so `Content-Length` holds and an overlong source never spills
/// into the next range. Pulled by one consumer at a time (the request body's pump).
private final class ExactLengthSource: @unchecked Sendable {
    private var iterator: ByteStream.AsyncIterator
    private let length: Int64
    private let remote: String
    private let progress: TransferProgress?
    private let count = Mutex<Int64>(0)

    init(_ stream: ByteStream, length: Int64, remote: String, progress: TransferProgress?) {
        self.iterator = stream.makeAsyncIterator()
        self.length = length
        self.remote = remote
        self.progress = progress
    }

    /// Bytes handed on so far.
    var sent: Int64 { count.withLock { $0 } }

    func next() async throws -> Data? {
        try progress.checkCancellation()
        guard let chunk = try await iterator.next() else {
            let sent = self.sent
            if sent < length {
                throw FileProviderError.truncated(path: remote, reason: "the source ended after \(sent) of \(length) bytes of a range")
            }
            return nil
        }
        let total = count.withLock { total -> Int64 in
            total += Int64(chunk.count)
            return total
        }
        guard total <= length else {
            throw FileProviderError.truncated(path: remote, reason: "the source sent more than the range asked for")
        }
        progress?.addBytes(Int64(chunk.count))
        return chunk
    }
}

/// A temporary file on a WebDAV server being filled by ranged `PUT`s.
final class WebDAVRangedUpload: SegmentedFileWriter {
    private let provider: WebDAVProvider
    private let target: String
    private let remote: String
    private let size: Int64
    private let options: WriteOptions
    /// Set once the file is in place (nothing to remove) or removed.
    private let finished = Mutex(false)
    /// Bytes of ranges the server acknowledged. The probe already gave the file its full size, so the
    /// server's size alone cannot tell a missing range.
    private let written = Mutex<Int64>(0)

    init(provider: WebDAVProvider, target: String, remote: String, size: Int64, options: WriteOptions) {
        self.provider = provider
        self.target = target
        self.remote = remote
        self.size = size
        self.options = options
    }

    func write(offset: Int64, length: Int64, from stream: ByteStream) async throws {
        guard offset >= 0, length > 0, offset + length <= size else {
            throw FileProviderError.invalidPath(path: remote, reason: "a range at \(offset) of \(length) bytes lies outside \(size) bytes")
        }
        try await provider.putRange(target, remote: remote, offset: offset, length: length, size: size,
                                    from: stream, progress: options.progress)
        written.withLock { $0 += length }
    }

    func commit() async throws -> FileObject {
        let acknowledged = written.withLock { $0 }
        guard acknowledged == size else {
            throw FileProviderError.truncated(path: remote, reason: "sent \(acknowledged) of \(size) bytes; nothing was written")
        }
        let object = try await provider.finishRangedUpload(target, remote: remote, size: size, options: options)
        finished.withLock { $0 = true }
        return object
    }

    func abort() async {
        let done = finished.withLock { done -> Bool in
            defer { done = true }
            return done
        }
        if !done { await provider.discard(target) }
    }
}
