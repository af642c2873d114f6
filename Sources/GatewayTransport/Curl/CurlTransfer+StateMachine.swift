/// The lifecycle of a transfer's response head, and of its body's first bytes, as value types:
/// each event is a mutating method that returns what to do, and the ``CurlTransfer`` does it
/// (outside its lock). So the rules (the first head wins, a caller who comes late gets it at once,
/// a small announced body is held back to arrive with its head) live in one testable place instead of
/// flags spread over the class. Modelled on async-http-client's `Transaction+StateMachine`.
extension CurlTransfer {
    /// Hands the response head (or the transfer's failure) from libcurl's thread to the one caller
    /// waiting in ``CurlTransfer/waitForHead()``, whichever of the two comes first.
    struct HeadStateMachine {
        enum State {
            /// Neither the head nor a caller yet.
            case idle
            /// A caller waits for the head.
            case waiting(CheckedContinuation<HTTPResponseHead, any Error>)
            /// The head (or failure) is known; a caller coming now gets it at once.
            case delivered(Result<HTTPResponseHead, any Error>)
        }

        private(set) var state = State.idle

        /// What ``waiterArrived(_:)`` asks the caller to do.
        enum WaitAction {
            /// Resume the continuation with this at once.
            case resume(Result<HTTPResponseHead, any Error>)
            /// It was kept; the head's delivery resumes it.
            case park
        }

        /// What ``headArrived(_:)`` asks the caller to do.
        enum DeliverAction {
            /// Resume the waiting caller with the head.
            case resume(CheckedContinuation<HTTPResponseHead, any Error>, Result<HTTPResponseHead, any Error>)
            /// Nothing: no caller waits yet (it will find the head), or a head was delivered before.
            case none
        }

        /// A caller asks for the head.
        mutating func waiterArrived(_ continuation: CheckedContinuation<HTTPResponseHead, any Error>) -> WaitAction {
            switch state {
            case .idle:
                state = .waiting(continuation)
                return .park
            case .delivered(let result):
                return .resume(result)
            case .waiting:
                preconditionFailure("one caller waits for a transfer's head")
            }
        }

        /// The head (or the transfer's failure) is known. Only the first delivery counts: the
        /// outcome delivered when the transfer ends does not replace a head handed out earlier.
        mutating func headArrived(_ result: Result<HTTPResponseHead, any Error>) -> DeliverAction {
            switch state {
            case .idle:
                state = .delivered(result)
                return .none
            case .waiting(let continuation):
                state = .delivered(result)
                return .resume(continuation, result)
            case .delivered:
                return .none
            }
        }

        /// Whether the head was delivered.
        var isDelivered: Bool {
            if case .delivered = state { return true }
            return false
        }
    }

    /// When the head goes out as body bytes arrive (on libcurl's thread only): with the first
    /// bytes, or, for an HTTP body announced at up to ``CurlTransfer/smallBody`` bytes, at the end
    /// of the transfer together with the whole body (the caller is resumed once, not twice), unless
    /// more than announced arrives.
    struct BodyStateMachine {
        enum State {
            /// No body byte yet.
            case awaitingBody
            /// A small body is arriving; the head waits for the end. Counts the bytes so far.
            case holdingHead(bytes: Int)
            /// The head went out; bytes are streamed.
            case streaming
        }

        private(set) var state = State.awaitingBody
        /// The largest body whose head is held back.
        let smallBody: Int

        init(smallBody: Int) { self.smallBody = smallBody }

        /// What to do with the head as `count` bytes arrive.
        enum Action: Equatable {
            /// Deliver the head now.
            case deliverHead
            /// Nothing to do for the head.
            case none
        }

        /// `count` body bytes arrived; `announcedSmall` says (on the first bytes) whether the
        /// head announced a body of at most ``smallBody`` bytes, for a protocol that holds heads back.
        mutating func bytesArrived(_ count: Int, announcedSmall: () -> Bool) -> Action {
            switch state {
            case .awaitingBody:
                guard announcedSmall() else {
                    state = .streaming
                    return .deliverHead
                }
                state = .holdingHead(bytes: count)
                return count > smallBody ? overflow() : .none
            case .holdingHead(let bytes):
                let total = bytes.addingReportingOverflow(count)
                guard !total.overflow, total.partialValue <= smallBody else { return overflow() }
                state = .holdingHead(bytes: total.partialValue)
                return .none
            case .streaming:
                return .none
            }
        }

        /// More than announced: no longer small, so the caller reads it as it comes.
        private mutating func overflow() -> Action {
            state = .streaming
            return .deliverHead
        }
    }
}
