import Synchronization

/// A byte channel to an SFTP server: the data of an SSH session channel running the `sftp`
/// subsystem, whichever SSH carries it (swift-nio-ssh in process, or the system's `ssh` client).
public protocol SFTPTransport: Sendable {
    /// Sends one whole SFTP packet. May return before the bytes left (the channel keeps them in
    /// order); waits while the channel cannot take more, so a fast sender waits for a slow channel.
    func send(_ packet: [UInt8]) async throws
    /// Where the server's bytes arrive, in order, on the transport's own thread.
    var inbound: InboundBytes { get }
    /// Closes the channel (and the SSH connection or process under it). Safe to call twice.
    func close() async
    /// Runs `command` on the server in a channel of its own (an SSH `exec` request) and returns its
    /// exit status and at most `limit` bytes of its standard output; `nil` when this channel cannot
    /// run commands.
    func run(_ command: String, limit: Int) async throws -> (status: Int, output: [UInt8])?
}

extension SFTPTransport {
    public func run(_ command: String, limit: Int) async throws -> (status: Int, output: [UInt8])? { nil }

    /// How long a command of ``run(_:limit:)`` may run, on either channel.
    var commandTimeout: Duration { .seconds(15) }
}

/// The server's bytes on their way from a transport to the one receiver that decodes them. The
/// transport's thread (a SwiftNIO event loop, or the thread reading `ssh`'s output) calls the
/// receiver directly, so a reply wakes only the task waiting for it, with no reader task between;
/// what arrives before the receiver is attached is held for it.
public final class InboundBytes: Sendable {
    /// What a transport delivers: bytes, then once the end (`nil` for an orderly close, or why it failed).
    public enum Event: Sendable {
        case bytes([UInt8])
        case end((any Error)?)
    }

    private struct State {
        var receiver: (@Sendable (Event) -> Void)?
        var held: [Event] = []
        var ended = false
    }

    private let state = Mutex(State())

    /// Creates a relay with no receiver yet.
    public init() {}

    /// Passes `event` on (or holds it until a receiver is attached). Nothing passes after the end.
    func deliver(_ event: Event) {
        // The receiver runs under the lock, so events reach it one at a time and in order.
        state.withLock { state in
            guard !state.ended else { return }
            if case .end = event { state.ended = true }
            if let receiver = state.receiver {
                receiver(event)
            } else {
                state.held.append(event)
            }
        }
    }

    /// Attaches the receiver (once) and hands it what was held.
    func attach(_ receiver: @escaping @Sendable (Event) -> Void) {
        state.withLock { state in
            state.receiver = receiver
            for event in state.held { receiver(event) }
            state.held = []
        }
    }
}
