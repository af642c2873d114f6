import Foundation
import GatewayCore

/// Feeds a request body from an async ``ByteStream`` to libcurl's read callback, with
/// back-pressure in both directions: the pump task waits while the buffer is full, the curl thread
/// waits while it is empty.
///
/// A sender waiting on a full buffer is resumed only once libcurl has read it down to half, and
/// each read fills libcurl's buffer from as many chunks as it takes, so a pipe running at the
/// network's speed does not switch threads per chunk.
///
/// The first ``replayLimit`` bytes are kept so that libcurl can rewind and resend them when a
/// reused keep-alive connection turns out to be closed, or an auth challenge comes late.
final class UploadChannel: @unchecked Sendable {
    private let condition = NSCondition()
    private var chunks: [Data] = []
    private var current = Data()
    private var offset = 0
    private var buffered = 0
    private var finished = false
    private var failure: (any Error)?
    private var closed = false
    private var waitingSender: CheckedContinuation<Void, Never>?
    private let capacity: Int
    private(set) var bytesSent: Int64 = 0
    /// Chunks handed to libcurl so far, while they add up to at most `replayLimit` bytes.
    private var history: [Data] = []
    private var historyBytes = 0
    private var replayable = true
    static let replayLimit = 1 << 20

    init(capacity: Int) { self.capacity = capacity }

    /// A channel holding all of `contents`, already finished: nothing needs to pump it, so libcurl
    /// never waits on another thread for these bytes.
    init(contents: Data) {
        capacity = max(1, contents.count)
        if !contents.isEmpty {
            chunks = [contents]
            buffered = contents.count
        }
        finished = true
    }

    /// Pumps `stream` into the channel until it ends, fails, or the transfer closes the channel.
    func pump(_ stream: ByteStream) async {
        do {
            for try await chunk in stream {
                if await !send(chunk) { return }
            }
            finish(nil)
        } catch {
            finish(error)
        }
    }

    /// Bytes waiting for libcurl (for tests).
    var bufferedForTesting: Int {
        condition.lock()
        defer { condition.unlock() }
        return buffered
    }

    /// The error the body stream failed with, if any.
    var streamError: (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        return failure
    }

    private func send(_ data: Data) async -> Bool {
        // An empty chunk would read as the end of the body.
        if data.isEmpty { return !isClosed }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            if closed {
                condition.unlock()
                continuation.resume()
                return
            }
            chunks.append(data)
            buffered += data.count
            condition.signal()
            if buffered >= capacity {
                waitingSender = continuation
                condition.unlock()
            } else {
                condition.unlock()
                continuation.resume()
            }
        }
        return !isClosed
    }

    private var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }

    private func finish(_ error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        condition.signal()
        condition.unlock()
    }

    /// Called by curl's read callback: copies up to `capacity` bytes into `buffer`. Returns the
    /// byte count, 0 at the end, or `nil` when the stream failed (abort the transfer).
    func read(into buffer: UnsafeMutableRawPointer, capacity maximum: Int) -> Int? {
        condition.lock()
        while offset >= current.count && chunks.isEmpty && !finished { condition.wait() }
        var count = 0
        while count < maximum {
            if offset >= current.count {
                guard !chunks.isEmpty else { break }
                current = chunks.removeFirst()
                offset = 0
                if replayable {
                    historyBytes += current.count
                    if historyBytes <= Self.replayLimit {
                        history.append(current)
                    } else {
                        replayable = false
                        history = []
                    }
                }
                continue
            }
            let step = min(maximum - count, current.count - offset)
            current.withUnsafeBytes { source in
                (buffer + count).copyMemory(from: source.baseAddress! + offset, byteCount: step)
            }
            offset += step
            count += step
        }
        if count == 0 {
            // Finished and drained.
            let failed = failure != nil
            condition.unlock()
            return failed ? nil : 0
        }
        buffered -= count
        bytesSent += Int64(count)
        var sender: CheckedContinuation<Void, Never>?
        if buffered <= capacity / 2, let waiting = waitingSender {
            waitingSender = nil
            sender = waiting
        }
        condition.unlock()
        sender?.resume()
        return count
    }

    /// Rewinds to the start for a resend, when everything sent so far was kept. Returns `false`
    /// when it cannot (more than ``replayLimit`` bytes already went out).
    func rewind() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard replayable else { return false }
        // Everything fetched so far is in `history` (including `current`): queue it again in front.
        chunks = history + chunks
        buffered = chunks.reduce(0) { $0 + $1.count }
        history = []
        historyBytes = 0
        current = Data()
        offset = 0
        bytesSent = 0
        return true
    }

    /// The transfer ended: release a waiting sender and make further sends no-ops.
    func close() {
        condition.lock()
        closed = true
        let sender = waitingSender
        waitingSender = nil
        condition.broadcast()
        condition.unlock()
        sender?.resume()
    }
}
