import Synchronization

/// A bounded pool of libcurl handles for one remote: at most `limit` transfers run at once, each on
/// its own handle; idle handles (with their open connections) are reused by the next request.
final class HandlePool: Sendable {
    private struct State {
        var idle: [CurlEasy] = []
        var inUse = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// Handles whose transfer ended and that are about to come back reusable.
        var returning = 0
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a handle, waiting while `limit` are in use.
    func acquire() async throws -> CurlEasy {
        while true {
            try Task.checkCancellation()
            // An idle handle, else a new one, unless one with an open connection is on its way back.
            let handle: CurlEasy?? = state.withLock { state in
                guard state.inUse < limit, !state.idle.isEmpty || state.returning == 0 else { return .none }
                state.inUse += 1
                return .some(state.idle.popLast())
            }
            if let handle { return handle ?? CurlEasy() }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let admitted = state.withLock { state -> Bool in
                    if state.inUse < limit, !state.idle.isEmpty || state.returning == 0 { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if admitted { continuation.resume() }
            }
        }
    }

    /// Returns a handle. `reusable` is `false` after a failure that may have left the connection in
    /// an unknown state; such a handle is dropped (its connection closed) instead of reused.
    /// Announces that a handle will come back reusable in a moment (``release(_:reusable:)``
    /// follows), so that ``acquire()`` waits for it rather than opening another connection.
    func willRelease() {
        state.withLock { $0.returning += 1 }
    }

    func release(_ handle: CurlEasy, reusable: Bool) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.inUse -= 1
            if reusable {
                state.idle.append(handle)
                state.returning = max(0, state.returning - 1)
            }
            guard !state.waiters.isEmpty else { return [] }
            // Once nothing is on its way back, every waiter may go on (to a new handle if need be).
            if state.returning == 0 {
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            return [state.waiters.removeFirst()]
        }
        for waiter in woken { waiter.resume() }
    }
}
