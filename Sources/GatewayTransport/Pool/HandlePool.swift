import Synchronization

/// A bounded pool of libcurl handles for one remote: at most `limit` transfers run at once, each on
/// its own handle; idle handles (with their open connections) are reused by the next request.
final class HandlePool: Sendable {
    private struct State {
        var idle: [CurlEasy] = []
        var inUse = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a handle, waiting while `limit` are in use.
    func acquire() async throws -> CurlEasy {
        while true {
            try Task.checkCancellation()
            let handle: CurlEasy?? = state.withLock { state in
                guard state.inUse < limit else { return .none }
                state.inUse += 1
                return .some(state.idle.popLast())
            }
            if let handle { return handle ?? CurlEasy() }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let admitted = state.withLock { state -> Bool in
                    if state.inUse < limit { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if admitted { continuation.resume() }
            }
        }
    }

    /// Returns a handle. `reusable` is `false` after a failure that may have left the connection in
    /// an unknown state; such a handle is dropped (its connection closed) instead of reused.
    func release(_ handle: CurlEasy, reusable: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.inUse -= 1
            if reusable { state.idle.append(handle) }
            return state.waiters.isEmpty ? nil : state.waiters.removeFirst()
        }
        waiter?.resume()
    }
}
