import GatewayCore

/// What a pushing backend reports between two rounds.
public enum ChangeSignalBatch: Sendable, Hashable {
    /// These folders (remote paths) changed: list only them.
    case folders(Set<String>)
    /// Events were lost (a kernel queue overflowed): compare the whole tree.
    case everything
}

/// A backend's own source of change notifications (Local: inotify). It is also the round's
/// observer, so it can watch folders as they appear.
public protocol ChangeSignal: SnapshotRoundObserver {
    /// Waits for the next batch of changes, coalesced over a short quiet period.
    func next() async throws -> ChangeSignalBatch
    /// Stops watching and releases the backend's resources.
    func stop()
}
