#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayCore
import Synchronization

/// Carries a response body from libcurl's thread to an async consumer, with back-pressure: the
/// curl thread blocks in ``push(_:)`` while `capacity` bytes wait unread, so a slow consumer slows
/// the download instead of filling memory.
///
/// libcurl hands body bytes over in pieces of at most 16 KiB (`CURL_MAX_WRITE_SIZE`), whatever its
/// receive buffer. The channel gathers them into pooled buffers and hands the consumer whole
/// buffers; a waiting consumer gets what has gathered once it is ``handoffSize`` bytes or its
/// oldest byte has waited ``handoffDelay`` (so a slow trickle still flows). Such a partial chunk is
/// a slice of the buffer, which goes on filling behind it and returns to the pool when its last
/// slice is released: no copy, and no buffer held for a few bytes. A 1 GiB download is then a few
/// thousand chunks instead of 65,536 freshly allocated ones, and a consumer writing to a file
/// writes large pieces.
///
/// A producer blocked on a full buffer is woken only once the consumer has read it down to half
/// (not after every chunk), so a pipe running at the consumer's speed does not switch threads per chunk.
///
/// If the consumer goes away (``abandon()``), pushes return `false` and the transfer is aborted.
final class DownloadChannel: @unchecked Sendable {
    private let condition = NSCondition()
    private let pool: ChunkBufferPool
    /// Whole (or handed-off) buffers, oldest first, from `head` on.
    private var chunks: [Data] = []
    private var head = 0
    /// Bytes in `chunks` and the unsent part of `filling`.
    private var buffered = 0
    /// The buffer being filled: bytes up to `sent` are out as chunks, up to `filled` not yet; and
    /// when the oldest unsent byte arrived.
    private var filling: SharedBuffer?
    private var sent = 0
    private var filled = 0
    private var fillStarted = ContinuousClock.now
    private var finished = false
    private var failure: (any Error)?
    private var abandoned = false
    private var waiting: CheckedContinuation<Data?, any Error>?
    private let capacity: Int
    /// A waiting consumer gets a partly filled buffer once it holds this many bytes.
    let handoffSize: Int
    /// A waiting consumer gets a partly filled buffer once its first byte is this old.
    let handoffDelay: Duration

    /// A channel holding up to `capacity` bytes (at least two of `pool`'s buffers).
    init(capacity: Int, pool: ChunkBufferPool, handoffSize: Int = 64 << 10, handoffDelay: Duration = .milliseconds(10)) {
        self.pool = pool
        self.capacity = max(capacity, 2 * pool.size)
        self.handoffSize = min(handoffSize, pool.size)
        self.handoffDelay = handoffDelay
    }

    deinit {
        filling?.release()
    }

    // MARK: Producer (curl thread, blocking)

    /// Copies `bytes` in; blocks while the buffer is full. Returns `false` once the consumer is gone
    /// (or no memory is left for a buffer).
    func push(_ bytes: UnsafeRawBufferPointer) -> Bool {
        condition.lock()
        var rest = bytes
        while !rest.isEmpty && !abandoned {
            if filling == nil {
                guard let buffer = pool.take() else {
                    abandoned = true
                    break
                }
                filling = SharedBuffer(buffer, pool: pool)
                sent = 0
                filled = 0
            }
            if sent == filled { fillStarted = .now }
            let count = min(rest.count, pool.size - filled)
            (filling!.base + filled).copyMemory(from: rest.baseAddress!, byteCount: count)
            filled += count
            buffered += count
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            if filled == pool.size { sealFilling() }
        }
        return waitForRoom(handingOff: takeForWaiter())
    }

    /// Hands a waiting consumer the partly filled buffer once its first byte has waited
    /// ``handoffDelay``: called from libcurl's progress callback, which runs at least once a second
    /// while the connection is quiet, so bytes never sit unseen behind a stalled server.
    func flushIfDue() {
        condition.lock()
        let handoff = takeForWaiter()
        condition.unlock()
        if let handoff { handoff.waiter.resume(returning: handoff.chunk) }
    }

    /// Ends the stream, normally (`nil`) or with an error; buffered bytes are still delivered first.
    func finish(_ error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        sealFilling()
        filling?.release()
        filling = nil
        var resumeWaiter: CheckedContinuation<Data?, any Error>?
        var chunk: Data?
        if let waiting {
            self.waiting = nil
            resumeWaiter = waiting
            chunk = head < chunks.count ? takeChunk() : nil
        }
        condition.unlock()
        guard let resumeWaiter else { return }
        if let chunk {
            resumeWaiter.resume(returning: chunk)
        } else if let error {
            resumeWaiter.resume(throwing: error)
        } else {
            resumeWaiter.resume(returning: nil)
        }
    }

    // MARK: Consumer (async)

    /// The next chunk, `nil` at the end; throws the transfer's error.
    func next() async throws -> Data? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
            condition.lock()
            if head < chunks.count || (filled > sent && isHandoffDue()) {
                if head == chunks.count { sealFilling() }
                let chunk = takeChunk()
                condition.unlock()
                continuation.resume(returning: chunk)
            } else if finished {
                let failure = self.failure
                condition.unlock()
                if let failure { continuation.resume(throwing: failure) } else { continuation.resume(returning: nil) }
            } else {
                waiting = continuation
                condition.unlock()
            }
        }
    }

    /// The consumer stopped reading: drop what is buffered and let the producer abort.
    func abandon() {
        condition.lock()
        abandoned = true
        chunks.removeAll()
        head = 0
        buffered = 0
        filling?.release()
        filling = nil
        sent = 0
        filled = 0
        condition.broadcast()
        condition.unlock()
    }

    /// Whether a consumer waits in ``next()`` (for tests).
    var isWaitingForTesting: Bool {
        condition.lock()
        defer { condition.unlock() }
        return waiting != nil
    }

    // MARK: Private (called with the lock held)

    /// Queues the unsent bytes of the filling buffer as a chunk (a slice of it); a full buffer is
    /// then let go, to return to the pool when its slices are released.
    private func sealFilling() {
        guard let filling else { return }
        if filled > sent {
            chunks.append(filling.slice(sent..<filled))
            sent = filled
        }
        if filled == pool.size {
            filling.release()
            self.filling = nil
        }
    }

    /// Takes the oldest queued chunk, waking a producer waiting for room once half is free.
    private func takeChunk() -> Data {
        let chunk = chunks[head]
        chunks[head] = Data()
        head += 1
        buffered -= chunk.count
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            head = 0
        }
        if buffered <= capacity / 2 { condition.signal() }
        return chunk
    }

    private func isHandoffDue() -> Bool {
        filled - sent >= handoffSize || ContinuousClock.now - fillStarted >= handoffDelay
    }

    /// The waiting consumer and the chunk it gets now, if it is waiting and one is due.
    private func takeForWaiter() -> (waiter: CheckedContinuation<Data?, any Error>, chunk: Data)? {
        guard let waiting, !abandoned else { return nil }
        if head == chunks.count {
            guard filled > sent, isHandoffDue() else { return nil }
            sealFilling()
        }
        self.waiting = nil
        return (waiting, takeChunk())
    }

    /// Resumes `handoff`'s consumer (outside the lock, which is held on entry), then blocks while the
    /// buffer is full. Returns whether the consumer is still there.
    private func waitForRoom(handingOff handoff: (waiter: CheckedContinuation<Data?, any Error>, chunk: Data)?) -> Bool {
        if let handoff {
            condition.unlock()
            handoff.waiter.resume(returning: handoff.chunk)
            condition.lock()
        }
        while buffered >= capacity && !abandoned { condition.wait() }
        let alive = !abandoned
        condition.unlock()
        return alive
    }
}

/// A pooled buffer handed out in slices: it goes back to the pool when the channel let it go and
/// every slice (a `Data` over part of it) was released.
private final class SharedBuffer: Sendable {
    private let address: UInt
    private let pool: ChunkBufferPool
    /// The channel's own reference plus one per live slice.
    private let references = Atomic<Int>(1)

    init(_ base: UnsafeMutableRawPointer, pool: ChunkBufferPool) {
        self.address = UInt(bitPattern: base)
        self.pool = pool
    }

    var base: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: address)! }

    /// `range` of the buffer as `Data`, without a copy; the bytes must not change while it lives.
    func slice(_ range: Range<Int>) -> Data {
        references.add(1, ordering: .relaxed)
        return Data(bytesNoCopy: base + range.lowerBound, count: range.count, deallocator: .custom { [self] _, _ in release() })
    }

    /// Drops one reference; the last gives the buffer back.
    func release() {
        if references.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { pool.give(base) }
    }
}
