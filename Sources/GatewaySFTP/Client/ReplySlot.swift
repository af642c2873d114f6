import Synchronization

/// Where one request's reply is delivered: filled once by the connection's reader, awaited once by
/// the caller (before or after it is filled).
final class ReplySlot<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, any Error>)
        case filled(Result<Value, any Error>)
        case taken
    }

    private let state = Mutex<State>(.empty)

    /// Delivers the result. Later deliveries are ignored.
    func fill(_ result: Result<Value, any Error>) {
        let waiter: CheckedContinuation<Value, any Error>? = state.withLock { state in
            switch state {
            case .empty:
                state = .filled(result)
                return nil
            case .waiting(let continuation):
                state = .taken
                return continuation
            case .filled, .taken:
                return nil
            }
        }
        waiter?.resume(with: result)
    }

    /// The result, waiting for it if needed.
    var value: Value {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Result<Value, any Error>? = state.withLock { state in
                    switch state {
                    case .empty:
                        state = .waiting(continuation)
                        return nil
                    case .filled(let result):
                        state = .taken
                        return result
                    case .waiting, .taken:
                        return .failure(SFTPClientError.protocolViolation("a reply awaited twice"))
                    }
                }
                if let ready { continuation.resume(with: ready) }
            }
        }
    }
}
