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

/// A file opened through the mount: reads of the version it was listed with, fetched on demand
/// into the mount's ``FileProviderCache`` (a sparse file per item version).
///
/// A read the cache can answer asks the remote for nothing. Otherwise the handle fetches from
/// the first missing byte with a ranged, version-checked read (``ReadOptions/ifVersion``) whose
/// length is the read-ahead window: 128 KiB for a read elsewhere, doubling up to 64 MiB while the
/// reads stay sequential, so `cat` of a large file makes a handful of requests and a database's
/// page reads fetch little more than their pages. The stream stays open between the kernel's
/// requests and reads that arrive slightly out of order (the kernel's parallel read-ahead) are
/// answered from it. A file changed on the remote while it is open fails that handle's reads
/// with `EIO` (a version mismatch), never gives bytes of two versions. A change made through the
/// mount itself (another handle's writes, once uploaded; a rename) moves the pin along, as on a
/// local file system. Reads of one handle run one at a time (``AsyncLock``).
final class OpenFile: @unchecked Sendable {
    /// The read-ahead window of a read that is not sequential.
    static let smallestWindow: Int64 = 128 << 10
    /// The largest read-ahead window.
    static let largestWindow: Int64 = 64 << 20
    /// How far ahead of a stream a read may start and still be answered from it (the kernel's
    /// asynchronous read-ahead has up to 12 requests of 1 MiB in flight, which a handle may take
    /// in another order).
    static let streamSlack: Int64 = 16 << 20
    /// How far from where the reads got to a read may start and still count as sequential (the
    /// window keeps growing).
    static let sequentialSlack: Int64 = 4 << 20

    let provider: any FileProviderReadWrite
    let inode: UInt64
    let cache: FileProviderCache
    /// The item's pin now (`nil` once the mount forgot it).
    let current: @Sendable () -> ReadPin?
    private var pin: ReadPin
    var path: String { pin.path }
    var size: Int64? { pin.size }
    var version: String? { pin.version }

    /// Held while a read uses the state below (which nothing else touches).
    private let lock = AsyncLock()
    private var entry: FileProviderCache.Entry?
    private var stream: ByteStream.AsyncIterator?
    /// The file offset of the stream's next byte.
    private var position: Int64 = 0
    /// Where the stream's range starts and ends.
    private var streamStart: Int64 = 0
    private var streamEnd: Int64 = 0
    /// Where the previous read ended (sequential reads start there).
    private var lastEnd: Int64 = -1
    private var window = OpenFile.smallestWindow
    /// The last fetch that failed: where, when, and why. The kernel asks again at once for a
    /// read-ahead that failed (page by page); those asks get the same answer, not one more wait
    /// for a stalled server each.
    private var lastFailure: (offset: Int64, at: ContinuousClock.Instant, error: any Error)?
    /// How long a failed fetch answers for itself.
    static let failureMemory = Duration.seconds(2)
    /// The bytes received last, contiguous, as they came (at most about ``recentLimit``): a read
    /// they cover is answered from them, piece by piece, without reading the cache file back.
    private var recent: [(offset: Int64, data: Data)] = []
    /// Copies what arrives into the cache file beside the replies.
    private let writer = CacheWriter()
    private var recentBytes = 0
    static let recentLimit = 4 << 20

    /// Whether the remote answers (offline, bytes not cached fail at once with `EHOSTUNREACH`).
    let connectivity: Connectivity?

    init(provider: any FileProviderReadWrite, inode: UInt64, cache: FileProviderCache, pin: ReadPin, connectivity: Connectivity? = nil,
         current: @escaping @Sendable () -> ReadPin?) {
        self.connectivity = connectivity
        self.provider = provider
        self.inode = inode
        self.cache = cache
        self.pin = pin
        self.current = current
    }

    /// The cache entry of a pin: shared by every handle of the same item version, or the
    /// handle's own where the remote gives no version tag.
    static func cacheKey(_ pin: ReadPin) -> FileProviderCache.Key? {
        guard let version = pin.version, let size = pin.size else { return nil }
        return FileProviderCache.Key(path: pin.path, version: version, size: size, generation: pin.sequence)
    }

    /// Up to `length` bytes from `offset`: fewer only at the end of the file.
    func read(offset: Int64, length: Int) async throws -> Data {
        let parts = try await readParts(offset: offset, length: length)
        return parts.count == 1 ? parts[0] : parts.reduce(into: Data()) { $0.append($1) }
    }

    /// The same bytes as ``read(offset:length:)``, in the pieces they arrived in where they are
    /// still at hand (for `fuse_reply_iov`).
    func readParts(offset: Int64, length: Int) async throws -> [Data] {
        try await lock.withLock { try await locked(offset: offset, length: length) }
    }

    /// Remembers a piece just received at `offset`.
    private func keep(_ data: Data, at offset: Int64) {
        if let last = recent.last, last.offset + Int64(last.data.count) == offset {
            recent.append((offset, data))
            recentBytes += data.count
        } else {
            recent = [(offset, data)]
            recentBytes = data.count
        }
        while recentBytes > Self.recentLimit, recent.count > 1 {
            recentBytes -= recent.removeFirst().data.count
        }
    }

    /// The first byte of `range` neither in the cache file nor among the pieces at hand (which
    /// may still be on their way to the file).
    private func firstNeeded(in range: Range<Int64>, of entry: FileProviderCache.Entry) -> Int64? {
        var from = range.lowerBound
        while from < range.upperBound {
            guard let missing = entry.firstMissing(in: from..<range.upperBound) else { return nil }
            if let first = recent.first, let last = recent.last, first.offset <= missing, missing < last.offset + Int64(last.data.count) {
                from = last.offset + Int64(last.data.count)
                continue
            }
            return missing
        }
        return nil
    }

    /// `range` from the pieces at hand, or `nil` where they do not hold all of it.
    private func fromRecent(_ range: Range<Int64>) -> [Data]? {
        guard let first = recent.first, let last = recent.last, first.offset <= range.lowerBound,
              last.offset + Int64(last.data.count) >= range.upperBound else { return nil }
        var parts: [Data] = []
        for piece in recent {
            let start = max(range.lowerBound, piece.offset)
            let end = min(range.upperBound, piece.offset + Int64(piece.data.count))
            guard start < end else { continue }
            let base = piece.data.startIndex
            parts.append(piece.data[(base + Int(start - piece.offset))..<(base + Int(end - piece.offset))])
        }
        return parts
    }

    private func locked(offset: Int64, length: Int) async throws -> [Data] {
        if let latest = current() {
            if latest.sequence != pin.sequence {
                // Changed through the mount since: read what it holds now.
                pin = latest
                stream = nil
                await releaseEntry()
                recent = []
                recentBytes = 0
            } else if latest.path != pin.path {
                pin.path = latest.path
            }
        }
        if let size, offset >= size { return [Data()] }
        let wanted = size.map { Int(min(Int64(length), $0 - offset)) } ?? length
        guard wanted > 0 else { return [Data()] }
        let entry = try self.entry ?? cache.acquire(Self.cacheKey(pin))
        self.entry = entry
        let range = offset..<(offset + Int64(wanted))
        // Sequential: at, or near, where the reads got to. The kernel's parallel read-ahead
        // (asynchronous reads) hands its pieces over slightly out of order.
        if lastEnd >= 0, abs(offset - lastEnd) <= Self.sequentialSlack {
            window = min(window * 2, Self.largestWindow)
            lastEnd = max(lastEnd, range.upperBound)
        } else {
            window = Self.smallestWindow
            lastEnd = range.upperBound
        }
        var end = range.upperBound
        while let gap = firstNeeded(in: range, of: entry) {
            if let failure = lastFailure, failure.offset == gap, ContinuousClock.now - failure.at < Self.failureMemory {
                throw failure.error
            }
            let next: Data?
            do {
                try connectivity?.requireOnline()
                // A hole just behind a stream that is still going (the read that asks for it came
                // after reads beyond it): fetched on its own, the stream goes on.
                // (A full cache keeps nothing of it: then the stream starts again there.)
                if stream != nil, gap < streamStart, position < streamEnd {
                    if try await fill(gap..<min(streamStart, max(range.upperBound, gap + Self.smallestWindow)), into: entry) { continue }
                    stream = nil
                }
                if stream == nil || gap < position || gap > position + Self.streamSlack || gap >= streamEnd {
                    try await start(at: gap, covering: range.upperBound)
                }
                next = try await stream?.next()
            } catch {
                stream = nil
                lastFailure = (gap, ContinuousClock.now, error)
                throw error
            }
            guard let chunk = next, !chunk.isEmpty else {
                stream = nil
                // The range asked for is done: the next turn asks for more.
                if position >= streamEnd { continue }
                // The remote's file ends here (shorter than listed: one without version tags).
                end = gap
                break
            }
            await writer.submit(chunk, at: position, to: entry)
            keep(chunk, at: position)
            position += Int64(chunk.count)
        }
        if let parts = fromRecent(offset..<end) { return parts }
        // Partly from the cache file: what was received must be written there first.
        await writer.flush()
        return try assemble(offset..<end, from: entry)
    }

    /// `range` from the pieces at hand where they hold it, and from the cache file elsewhere
    /// (bytes a full cache did not keep are among the pieces).
    private func assemble(_ range: Range<Int64>, from entry: FileProviderCache.Entry) throws -> [Data] {
        var parts: [Data] = []
        var at = range.lowerBound
        let held = recent.first.map { $0.offset..<(recent.last!.offset + Int64(recent.last!.data.count)) } ?? 0..<0
        while at < range.upperBound {
            if held.contains(at), let pieces = fromRecent(at..<min(range.upperBound, held.upperBound)) {
                parts += pieces
                at = min(range.upperBound, held.upperBound)
                continue
            }
            let end = held.lowerBound > at ? min(range.upperBound, held.lowerBound) : range.upperBound
            // Never bytes the cache file does not hold (they would read as zeros).
            guard entry.firstMissing(in: at..<end) == nil else { throw POSIXError(.EIO) }
            parts.append(try entry.read(at: at, length: Int(end - at)))
            at = end
        }
        return parts
    }

    /// Starts a ranged read at `offset` of at least the bytes up to `needed`, plus the window.
    private func start(at offset: Int64, covering needed: Int64) async throws {
        stream = nil
        var length = max(needed - offset, window)
        if let size { length = min(length, size - offset) }
        let options = ReadOptions(offset: offset, length: length, ifVersion: version, chunkSize: 128 << 10)
        stream = try await provider.readStream(path: path, options: options).makeAsyncIterator()
        position = offset
        streamStart = offset
        streamEnd = offset + length
    }

    /// Fetches `range` with a request of its own into the cache file (written before it returns);
    /// `false` when the cache kept none of it (it is full).
    private func fill(_ range: Range<Int64>, into entry: FileProviderCache.Entry) async throws -> Bool {
        let options = ReadOptions(offset: range.lowerBound, length: range.upperBound - range.lowerBound, ifVersion: version,
                                  chunkSize: 128 << 10)
        var at = range.lowerBound
        for try await chunk in try await provider.readStream(path: path, options: options) {
            await writer.submit(chunk, at: at, to: entry)
            at += Int64(chunk.count)
        }
        await writer.flush()
        // Shorter than asked: the remote's file ends there (or was cut); the caller's next turn
        // finds the hole again and the stream reports the end.
        guard at > range.lowerBound else { throw POSIXError(.EIO) }
        return entry.firstMissing(in: range.lowerBound..<at) != range.lowerBound
    }

    /// Fetches every byte not cached yet: the remote item is about to go (an `unlink` or a rename
    /// over it) and this handle must go on reading it, as on a local file system.
    func fetchAll() async throws {
        guard let size, size > 0 else { return }
        var offset: Int64 = 0
        while offset < size {
            let chunk = try await read(offset: offset, length: 1 << 20)
            if chunk.isEmpty { break }
            offset += Int64(chunk.count)
        }
        await writer.flush()
    }

    /// Ends the stream and lets go of the cache entry (the file was closed).
    func close() async {
        await lock.withLock {
            stream = nil
            await releaseEntry()
        }
    }

    /// Lets go of the cache entry once the bytes on their way to it are written: a write after
    /// the release could land in an entry the cache already removed, and count towards its total.
    private func releaseEntry() async {
        guard let entry else { return }
        await writer.flush()
        cache.release(entry)
        self.entry = nil
    }
}
