import GatewayCore
import Synchronization

/// The counters and event sink of one run, shared by its tasks.
final class RunState: Sendable {
    private let counters = Mutex(CopySummary())
    private let onEvent: @Sendable (CopyEvent) -> Void
    let dryRun: Bool

    init(onEvent: @escaping @Sendable (CopyEvent) -> Void, dryRun: Bool) {
        self.onEvent = onEvent
        self.dryRun = dryRun
    }

    var summary: CopySummary { counters.withLock { $0 } }

    func event(_ event: CopyEvent) { onEvent(event) }

    func copied(_ path: String, bytes: Int64) {
        counters.withLock { $0.copied += 1; $0.bytes = $0.bytes.saturatingAdding(bytes) }
        onEvent(.copied(path: path, bytes: bytes))
    }

    /// A dry run's planned copy: counted as if done, so the summary says what would happen.
    func planned(_ path: String, action: PlannedAction, bytes: Int64) {
        counters.withLock { $0.copied += 1; $0.bytes = $0.bytes.saturatingAdding(bytes) }
        onEvent(.wouldDo(action: action, path: path))
    }

    /// A range of a split file done (written, or found unneeded): its bytes counted, its outcome
    /// kept for `gateway finalize`.
    func range(_ outcome: RangeOutcome, bytes: Int64) {
        counters.withLock {
            $0.bytes = $0.bytes.saturatingAdding(bytes)
            $0.ranges.append(outcome)
        }
    }

    func skipped(_ path: String, reason: SkipReason) {
        counters.withLock { $0.skipped += 1 }
        onEvent(.skipped(path: path, reason: reason))
    }

    /// A destination folder was created; the run's own root (`""`) is counted but not reported as
    /// an event (it is the destination the caller named).
    func folderCreated(_ path: String) {
        counters.withLock { $0.foldersCreated += 1 }
        if !path.isEmpty { onEvent(.createdFolder(path: path)) }
    }

    func deleted(_ path: String, planned: Bool = false) {
        counters.withLock { $0.deleted += 1 }
        onEvent(planned ? .wouldDo(action: .delete, path: path) : .deleted(path: path))
    }

    /// A failure of one item. A cancellation (the caller's) is no failure: the run ends with it.
    func fail(_ path: String, operation: String, side: CopySide = .source, item: String? = nil, error: any Error) {
        guard error.failureKind != .cancelled else { return }
        counters.withLock { $0.failed += 1 }
        onEvent(.failed(path: path, operation: operation, side: side, item: item ?? path, error: error))
    }
}
