import Foundation
public import GatewayCore
import GatewayTransport
import Logging
import Synchronization

/// Large uploads as several `PUT`s with `Content-Range` at once, each on its own connection, into a
/// temporary file that is moved into place once the server holds every range as sent.
///
/// RFC 9110 lets a server refuse such a `PUT` (400) and some ignore the header and store the range
/// as the whole file, so every file starts with a probe: its last byte alone, sent as a range, then
/// the temporary file's size is asked for. Only a server that now reports the full size (Apache
/// mod_dav, nginx with the put-range patch) gets the ranges; any other answer means one plain `PUT`.
///
/// A server can pass the probe and still lose ranges written at once (one that truncates the file
/// when a `PUT` opens it, or copies, modifies and renames it per `PUT`). Before the rename, the
/// first and last 4 KiB of every range are therefore read back and compared with what was sent.
/// Any sign that ranges don't work (a refusal, the wrong size, bytes that differ, a range answered
/// with an error) makes the rest of the run send plain `PUT`s, so a retry of the file succeeds.
extension WebDAVProvider: FileProviderSegmentedWrite {
    public func openSegmentedWrite(path: String, size: Int64, options: WriteOptions) async throws -> (any SegmentedFileWriter)? {
        // Conditional and in-place writes, and vendors whose PUT carries more than bytes (X-OC-Mtime,
        // OC-Checksum), take the plain path.
        guard rangedUploads, vendor == .other, size >= 2, options.atomically, options.ifVersion == nil,
              options.contentHashes.isEmpty, !rangedUploadsRefused.withLock({ $0 }) else { return nil }
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw CocoaError.posix(EISDIR, path: remote, remote: name, writing: true) }
        // Ranges go to a temporary renamed at the end: not for a name the server would change.
        if await needsDirectPut(remote) { return nil }
        if !options.overwrite {
            let existing = try await itemIfPresent(path: remote)
            if existing?.isDirectory == true { throw CocoaError.posix(EISDIR, path: remote, remote: name, writing: true) }
            if existing != nil { throw existsError(remote) }
        }
        let target = RemotePath.temporaryPath(for: remote)
        guard try await probeRangedPut(target, remote: remote, size: size) else { return nil }
        logger.debug("uploading in ranges", metadata: ["path": .string(remote), "bytes": .stringConvertible(size)])
        return WebDAVRangedUpload(provider: self, target: target, remote: remote, size: size, options: options)
    }

    /// Sends a placeholder for the last byte of a `size`-byte file to `target` as a range, and tells
    /// whether the server stored it as one (the file now has `size` bytes). Leaves nothing behind
    /// when the answer is `false`.
    private func probeRangedPut(_ target: String, remote: String, size: Int64) async throws -> Bool {
        let head: HTTPResponseHead
        do {
            (head, _) = try await send("PUT", target, headers: [
                (name: "Content-Range", value: "bytes \(size - 1)-\(size - 1)/\(size)"),
                (name: "Content-Type", value: ""),
            ], body: .data(Data([0])))
        } catch {
            await discard(target)  // the server may have stored it before the connection broke
            throw error
        }
        switch head.status {
        case 200..<300:
            let stored: FileObject?
            do {
                stored = try await itemIfPresent(path: target)
            } catch {
                await discard(target)
                throw error
            }
            if stored?.size == size { return true }
            // Stored as the whole file: the header was ignored.
            refuseRangedUploads("server ignores Content-Range on PUT")
            await discard(target)
            return false
        case 405, 416, 501:
            refuseRangedUploads("server refuses Content-Range on PUT", status: head.status)
            return false
        default:
            // 400 is RFC 9110's answer to a ranged PUT, but also to a name the server rejects; 403,
            // 404 or 409 can mean "no such folder" or "no partial PUT on a new file". This file goes
            // in one PUT, which stores it or reports the real problem; later files probe again.
            return false
        }
    }

    /// Makes the rest of this run send every file in one plain `PUT`.
    func refuseRangedUploads(_ reason: String, status: Int? = nil) {
        let first = rangedUploadsRefused.withLock { refused -> Bool in
            defer { refused = true }
            return !refused
        }
        guard first else { return }
        var metadata: Logger.Metadata = ["remote": .string(name)]
        if let status { metadata["status"] = .stringConvertible(status) }
        logger.info("\(reason); large files go in one request", metadata: metadata)
    }

    /// Sends `length` bytes of `stream` as the range at `offset` of the `size`-byte file `target`;
    /// returns the first and last bytes sent, to be read back before the file is committed.
    func putRange(_ target: String, remote: String, offset: Int64, length: Int64, size: Int64,
                  from stream: ByteStream, progress: TransferProgress?) async throws -> [RangeSample] {
        let source = ExactLengthSource(stream, offset: offset, length: length, remote: remote, progress: progress)
        let (head, response) = try await send("PUT", target, headers: [
            (name: "Content-Range", value: "bytes \(offset)-\(offset + length - 1)/\(size)"),
        ], body: .stream(ByteStream(expectedLength: length) { try await source.next() }), requestBuffer: Self.rangeBuffer)
        guard head.isSuccess else {
            if ![401, 403, 507].contains(head.status) {
                // Maybe a server that cannot take several writes to one file at once.
                refuseRangedUploads("server answered a ranged PUT with an error", status: head.status)
            }
            throw failure(head, body: response, path: remote)
        }
        let count = source.sent
        guard count == length else {
            throw FileProviderError.truncated(path: remote, reason: "sent \(count) of \(length) bytes of a range")
        }
        return source.samples
    }

    /// Bytes each range may read ahead of the network: several ranges share one transfer's memory.
    static let rangeBuffer = 1 << 20

    /// Checks the assembled temporary file (its size, and `samples` read back) and moves it into place.
    func finishRangedUpload(_ target: String, remote: String, size: Int64, samples: [RangeSample],
                            options: WriteOptions) async throws -> FileObject {
        let stored = try await itemIfPresent(path: target)
        guard let stored, stored.size == size else {
            refuseRangedUploads("server did not assemble the ranges of a PUT")
            throw FileProviderError.truncated(path: remote, reason: "the server holds \(stored?.size.map(String.init) ?? "no") bytes of \(size); nothing was written")
        }
        try await checkSamples(samples, in: target, remote: remote)
        try await options.beforeReplacing?(remote)
        let clock = ContinuousClock()
        let started = clock.now
        let answer = try await commit(target, to: remote, overwrite: options.overwrite)
        let committed = try await verifyCommitted(remote, size: size)
        logger.debug("wrote file in ranges", metadata: ["path": .string(remote), "bytes": .stringConvertible(size)])
        let stamp = await recordSourceStamp(at: remote, size: size, options: options, answer: answer,
                                            elapsed: started.duration(to: clock.now), stored: committed)
        return await storedAttributes(remote, size: size, options: options, described: committed, stamp: stamp, fallbackDate: nil)
    }
}

extension WebDAVProvider {
    /// Reads `samples` back from `target` and compares them with what was sent; any difference
    /// fails (and makes the rest of the run send plain `PUT`s).
    func checkSamples(_ samples: [RangeSample], in target: String, remote: String) async throws {
        for sample in samples where !sample.bytes.isEmpty {
            let bytes = try await contents(path: target, offset: sample.offset, length: Int64(sample.bytes.count))
            guard bytes == sample.bytes else {
                refuseRangedUploads("server did not keep the ranges of a PUT as sent")
                throw FileProviderError.truncated(
                    path: remote, reason: "the server holds other bytes at \(sample.offset) than were sent there; nothing was written")
            }
        }
    }
}

/// Bytes sent at an offset, to compare with what the server returns from there.
struct RangeSample: Sendable {
    var offset: Int64
    var bytes: Data
}

/// Exactly `length` bytes of a stream (``ByteStream/exactly(_:path:what:)``), so `Content-Length`
/// holds and an overlong source never spills into the next range; keeps the first and last
/// ``sampleSize`` bytes. Pulled by one consumer at a time (the request body's pump).
private final class ExactLengthSource: @unchecked Sendable {
    static let sampleSize = 4096

    private var iterator: ByteStream.AsyncIterator
    private let offset: Int64
    private let progress: TransferProgress?
    private struct State {
        var sent: Int64 = 0
        var head = Data()
        var tail = Data()
    }
    private let state = Mutex(State())

    init(_ stream: ByteStream, offset: Int64, length: Int64, remote: String, progress: TransferProgress?) {
        self.iterator = stream.exactly(length, path: remote, what: "a range").makeAsyncIterator()
        self.offset = offset
        self.progress = progress
    }

    /// Bytes handed on so far.
    var sent: Int64 { state.withLock { $0.sent } }

    /// The first and last bytes handed on, at their offsets in the file.
    var samples: [RangeSample] {
        state.withLock { state in
            [RangeSample(offset: offset, bytes: state.head),
             RangeSample(offset: offset + state.sent - Int64(state.tail.count), bytes: state.tail)]
        }
    }

    func next() async throws -> Data? {
        try progress.checkCancellation()
        guard let chunk = try await iterator.next() else { return nil }
        state.withLock { state in
            state.sent += Int64(chunk.count)
            let size = Self.sampleSize
            if state.head.count < size { state.head.append(chunk.prefix(size - state.head.count)) }
            state.tail = chunk.count >= size ? Data(chunk.suffix(size)) : Data((state.tail + chunk).suffix(size))
        }
        progress?.addBytes(Int64(chunk.count))
        return chunk
    }
}

/// A temporary file on a WebDAV server being filled by ranged `PUT`s.
final class WebDAVRangedUpload: SegmentedFileWriter {
    private let provider: WebDAVProvider
    private let target: String
    private let options: WriteOptions
    /// The ranges, and the final name (`ledger.path`).
    private let ledger: SegmentLedger
    /// What to read back before committing.
    private let samples = Mutex<[RangeSample]>([])

    init(provider: WebDAVProvider, target: String, remote: String, size: Int64, options: WriteOptions) {
        self.provider = provider
        self.target = target
        self.options = options
        self.ledger = SegmentLedger(size: size, path: remote)
    }

    func write(offset: Int64, length: Int64, from stream: ByteStream) async throws {
        try ledger.take(offset: offset, length: length)
        let sent = try await provider.putRange(target, remote: ledger.path, offset: offset, length: length, size: ledger.size,
                                               from: stream, progress: options.progress)
        samples.withLock { $0 += sent }
        ledger.acknowledge(length)
    }

    func commit() async throws -> FileObject {
        // The probe gave the server's file its full size already: count what was acknowledged.
        try ledger.checkComplete()
        let object = try await provider.finishRangedUpload(target, remote: ledger.path, size: ledger.size,
                                                           samples: samples.withLock { $0 }, options: options)
        ledger.finish()
        return object
    }

    func abort() async {
        if ledger.finish() { await provider.discard(target) }
    }
}
