import Foundation

/// Carries a response body from libcurl's thread to an async consumer, with back-pressure: the
/// curl thread blocks in ``push(_:)`` while `capacity` bytes wait unread, so a slow consumer slows
/// the download instead of filling memory.
///
/// A producer blocked on a full buffer is woken only once the consumer has read it down to half
/// (not after every chunk), so a pipe running at the consumer's speed does not switch threads per chunk.
///
/// If the consumer goes away (``abandon()``), pushes return `false` and the transfer is aborted.
final class DownloadChannel: @unchecked Sendable {
    private let condition = NSCondition()
    private var chunks: [Data] = []
    private var head = 0
    private var buffered = 0
    private var finished = false
    private var failure: (any Error)?
    private var abandoned = false
    private var waiting: CheckedContinuation<Data?, any Error>?
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    // MARK: Producer (curl thread, blocking)

    /// Hands over a chunk; blocks while the buffer is full. Returns `false` once the consumer is gone.
    func push(_ data: Data) -> Bool {
        condition.lock()
        if abandoned {
            condition.unlock()
            return false
        }
        if let waiting {
            self.waiting = nil
            condition.unlock()
            waiting.resume(returning: data)
            return true
        }
        chunks.append(data)
        buffered += data.count
        while buffered >= capacity && !abandoned { condition.wait() }
        let alive = !abandoned
        condition.unlock()
        return alive
    }

    /// Ends the stream, normally (`nil`) or with an error.
    func finish(_ error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        let waiting = self.waiting
        self.waiting = nil
        condition.unlock()
        if let error { waiting?.resume(throwing: error) } else { waiting?.resume(returning: nil) }
    }

    // MARK: Consumer (async)

    /// The next chunk, `nil` at the end; throws the transfer's error.
    func next() async throws -> Data? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
            condition.lock()
            if head < chunks.count {
                let chunk = chunks[head]
                chunks[head] = Data()
                head += 1
                buffered -= chunk.count
                if head == chunks.count {
                    chunks.removeAll(keepingCapacity: true)
                    head = 0
                }
                if buffered <= capacity / 2 { condition.signal() }
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
        condition.broadcast()
        condition.unlock()
    }
}
