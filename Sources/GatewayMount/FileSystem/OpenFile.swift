import Foundation
import GatewayCore
import GatewayState

/// What a read of an open file is pinned to: the item's path and version when it was opened, or
/// when the mount itself last changed it (``sequence`` counts those changes: an upload of what was
/// written through the mount, a time set, a rename).
struct ReadPin: Sendable, Equatable {
    var path: String
    var version: String?
    var size: Int64?
    var sequence: UInt64
}

/// A file opened through the mount: reads of the version it was listed with, fetched on demand.
///
/// Sequential reads (what `cat`, `cp` and most programs do) come from one streamed read of the
/// rest of the file, kept open between the kernel's requests: one request to the remote, not one
/// per 128 KiB. A read elsewhere starts a new stream at its offset. Every stream is pinned to the
/// version the file was opened at (``ReadOptions/ifVersion``): a file changed on the remote while
/// it is open fails that handle's reads with `EIO` (a version mismatch), never gives bytes of two
/// versions. A change made through the mount itself (another handle's writes, once uploaded; a
/// rename) moves the pin along, as on a local file system. Reads of one handle run one at a time
/// (``AsyncLock``), so a stream is never shared.
final class OpenFile: @unchecked Sendable {
    let provider: any FileProviderReadWrite
    let inode: UInt64
    /// The item's pin now (`nil` once the mount forgot it).
    let current: @Sendable () -> ReadPin?
    private var pin: ReadPin
    var path: String { pin.path }
    var size: Int64? { pin.size }
    var version: String? { pin.version }

    /// Held while a read uses the state below (which nothing else touches).
    private let lock = AsyncLock()
    private var stream: ByteStream.AsyncIterator?
    /// The file offset of the stream's next byte.
    private var position: Int64 = 0
    /// Bytes received past what was asked for, from `position - pending.count`.
    private var pending = Data()

    init(provider: any FileProviderReadWrite, inode: UInt64, pin: ReadPin, current: @escaping @Sendable () -> ReadPin?) {
        self.provider = provider
        self.inode = inode
        self.pin = pin
        self.current = current
    }

    /// Up to `length` bytes from `offset`: fewer only at the end of the file.
    func read(offset: Int64, length: Int) async throws -> Data {
        try await lock.withLock { try await locked(offset: offset, length: length) }
    }

    private func locked(offset: Int64, length: Int) async throws -> Data {
        if let latest = current() {
            if latest.sequence != pin.sequence {
                // Changed through the mount since: read what it holds now.
                pin = latest
                stream = nil
                pending = Data()
            } else if latest.path != pin.path {
                pin.path = latest.path
            }
        }
        if let size, offset >= size { return Data() }
        let wanted = size.map { Int(min(Int64(length), $0 - offset)) } ?? length
        guard wanted > 0 else { return Data() }
        let bufferStart = position - Int64(pending.count)
        if stream == nil || offset < bufferStart || offset > position {
            try await start(at: offset)
        } else if offset > bufferStart {
            pending.removeFirst(Int(offset - bufferStart))
        }
        while pending.count < wanted {
            guard let chunk = try await stream?.next() else { break }
            pending.append(chunk)
            position += Int64(chunk.count)
        }
        let count = min(wanted, pending.count)
        let result = Data(pending.prefix(count))
        pending.removeFirst(count)
        if pending.isEmpty { pending = Data() }
        return result
    }

    /// Starts a stream of the rest of the file at `offset`, at the opened version.
    private func start(at offset: Int64) async throws {
        stream = nil
        pending = Data()
        let options = ReadOptions(offset: offset, length: size.map { $0 - offset }, ifVersion: version, chunkSize: 128 << 10)
        stream = try await provider.readStream(path: path, options: options).makeAsyncIterator()
        position = offset
    }

    /// Ends the stream (the file was closed).
    func close() async {
        await lock.withLock {
            stream = nil
            pending = Data()
        }
    }
}
