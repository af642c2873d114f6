import Dispatch
import Foundation
import GatewayState
import Synchronization

/// Writes fetched bytes into a read-cache entry on a queue of its own, so the copy into the cache
/// file (about a third of a large read's time) runs beside the reply to the kernel instead of
/// before it. A range counts as cached only once written. At most ``limit`` bytes wait; a writer
/// that gets ahead waits for the queue. A failed write (a full disk) leaves the range uncached:
/// it is fetched again when read, never answered wrongly; so does a full cache (its limit is
/// hard).
final class CacheWriter: Sendable {
    static let limit = 4 << 20
    private let queue = DispatchQueue(label: "gateway-mount-cache-writer")
    private let waiting = Mutex((bytes: 0, resume: [CheckedContinuation<Void, Never>]()))

    /// Writes `data` at `offset` of `entry` (counted by `cache`), soon.
    func submit(_ data: Data, at offset: Int64, to entry: FileProviderCache.Entry) async {
        let count = data.count
        while waiting.withLock({ $0.bytes }) + count > Self.limit, waiting.withLock({ $0.bytes }) > 0 {
            await withCheckedContinuation { continuation in
                let queued = waiting.withLock { state -> Bool in
                    guard state.bytes + count > Self.limit, state.bytes > 0 else { return false }
                    state.resume.append(continuation)
                    return true
                }
                if !queued { continuation.resume() }
            }
        }
        waiting.withLock { $0.bytes += count }
        queue.async { [self] in
            _ = try? entry.write(data, at: offset)
            let resumed = waiting.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.bytes -= count
                defer { state.resume = [] }
                return state.resume
            }
            for continuation in resumed { continuation.resume() }
        }
    }

    /// Returns once everything submitted is written.
    func flush() async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }
}
