import Foundation
import Synchronization

/// Runs the media libraries' synchronous work on threads of its own, never on the Swift
/// concurrency pool: their reads of a ``RemoteMediaInput`` block while the pool fetches the bytes.
///
/// At most `limit` jobs run at once (libvips decodes with threads of its own besides); the rest
/// wait without holding a thread.
public enum MediaThread {
    private static let gate = Gate(limit: max(2, ProcessInfo.processInfo.activeProcessorCount))
    /// libvips and libjpeg keep large frames on the stack.
    private static let stackSize = 8 << 20

    /// Runs `work` on a media thread; `onCancel` runs when the calling task is cancelled meanwhile
    /// (it makes the work's reads fail, so the work ends soon).
    public static func run<T: Sendable>(onCancel: @escaping @Sendable () -> Void = {}, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await gate.enter()
        defer { gate.leave() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let thread = Thread {
                    continuation.resume(with: Result { try work() })
                }
                thread.stackSize = stackSize
                thread.start()
            }
        } onCancel: {
            onCancel()
        }
    }

    /// A counting gate for async callers.
    final class Gate: Sendable {
        private struct State {
            var available: Int
            var waiting: [CheckedContinuation<Void, Never>] = []
        }
        private let state: Mutex<State>

        init(limit: Int) { state = Mutex(State(available: limit)) }

        func enter() async throws {
            try Task.checkCancellation()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.available > 0 {
                        state.available -= 1
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }

        func leave() {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if state.waiting.isEmpty {
                    state.available += 1
                    return nil
                }
                return state.waiting.removeFirst()
            }
            next?.resume()
        }
    }
}
