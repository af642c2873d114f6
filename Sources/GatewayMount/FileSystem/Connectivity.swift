import Foundation
import GatewayCore
import Logging
import Synchronization

/// Whether the remote answers, as the mount last saw it. A request that could not reach the
/// remote (refused, lost or timed-out connections) makes the mount offline: from then on what
/// needs the remote fails at once with `EHOSTUNREACH` instead of waiting for a time-out each,
/// cached contents are still read, uploads wait, and the remote is asked every second whether it
/// is back (``FileProviderBasic/isReachable()``). Back online, waiting uploads go at once.
final class Connectivity: Sendable {
    private let state = Mutex(State())
    let logger: Logger
    /// How long between two asks while offline.
    static let probeInterval = Duration.seconds(1)

    private struct State {
        var online = true
        var probing = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    init(logger: Logger) {
        self.logger = logger
    }

    var isOnline: Bool { state.withLock { $0.online } }

    /// Throws `EHOSTUNREACH` while offline (before a request that would only wait to fail).
    func requireOnline() throws {
        if !isOnline { throw POSIXError(.EHOSTUNREACH) }
    }

    /// Whether `error` says the remote could not be reached (no connection, or none that
    /// answered), rather than an answer or a damaged transfer.
    static func isUnreachable(_ error: any Error) -> Bool {
        if let posix = error as? POSIXError {
            return [.EHOSTUNREACH, .ECONNREFUSED, .ENETUNREACH, .ETIMEDOUT, .ECONNRESET].contains(posix.code)
        }
        if let url = error as? URLError {
            return [.cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet, .timedOut, .cannotFindHost,
                    .dnsLookupFailed].contains(url.code)
        }
        if let cocoa = error as? CocoaError, let underlying = cocoa.userInfo[NSUnderlyingErrorKey] as? any Error {
            return isUnreachable(underlying)
        }
        // A transfer cut short (a listing or a file that ended early) is not an outage by itself.
        if error is FileProviderError { return false }
        return error.failureKind == .connectionLost || error.failureKind == .timedOut
    }

    /// A request failed with `error`: when it could not reach the remote, and the remote does not
    /// answer a check either (one dropped connection is not an outage), the mount goes offline.
    func noteFailure(_ error: any Error, fileSystem: MountFileSystem) {
        guard Self.isUnreachable(error) else { return }
        let check = state.withLock { state -> Bool in
            guard state.online, !state.probing else { return false }
            state.probing = true
            return true
        }
        guard check else { return }
        Task {
            if await fileSystem.provider.isReachable() {
                state.withLock { $0.probing = false }
                return
            }
            state.withLock { $0.online = false }
            logger.warning("the remote does not answer; working offline from what is cached", metadata: ["error": .string("\(error)")])
            fileSystem.options.events?(.offline(reason: ErrorMessage.reason(for: error)))
            await probe(fileSystem: fileSystem)
        }
    }

    /// The mount starts offline (its remote did not answer at the start).
    func startOffline(fileSystem: MountFileSystem) {
        state.withLock { state in
            state.online = false
            state.probing = true
        }
        fileSystem.options.events?(.offline(reason: "it did not answer when the mount started"))
        Task { await probe(fileSystem: fileSystem) }
    }

    /// Returns once the remote answers (at once while online).
    func waitUntilOnline() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.online { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func probe(fileSystem: MountFileSystem) async {
        while true {
            try? await Task.sleep(for: Self.probeInterval)
            // Back: the folder changes made offline go first (uploads wait for them).
            if await fileSystem.provider.isReachable(), await fileSystem.replayChanges() { break }
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.online = true
            state.probing = false
            defer { state.waiters = [] }
            return state.waiters
        }
        logger.info("the remote answers again")
        fileSystem.options.events?(.online)
        for waiter in waiters { waiter.resume() }
        fileSystem.cameOnline()
    }
}
