import Foundation
import Synchronization

/// Progress of a long operation (a transfer, a tree copy): bytes and files done and expected, rate
/// and estimated time left, and a cancel switch.
///
/// Thread-safe and `Sendable`: the operation updates it from wherever it runs, and a UI polls
/// ``snapshot`` on its own schedule. Calling ``cancel()`` makes the operation stop at its next chunk
/// with `CancellationError`, just like cancelling its `Task`.
public final class TransferProgress: Sendable {
    /// A consistent reading of the progress at one instant.
    public struct Snapshot: Sendable, Hashable {
        /// Bytes transferred so far.
        public var completedBytes: Int64
        /// Bytes expected in total, when known.
        public var totalBytes: Int64?
        /// Files finished so far.
        public var completedFiles: Int
        /// Files expected in total, when known.
        public var totalFiles: Int?
        /// Time since the progress was created.
        public var elapsed: Duration
        /// Recent transfer rate in bytes per second (smoothed).
        public var bytesPerSecond: Double
        /// Estimated time left, when the total and a rate are known.
        public var estimatedTimeRemaining: Duration?
        /// The item being worked on, if the operation reports one.
        public var currentItem: String?
        /// The named parts running right now (the files of a tree copy in flight), oldest first.
        public var active: [Active] = []

        /// Fraction done between 0 and 1, when the total is known.
        public var fractionCompleted: Double? {
            guard let totalBytes, totalBytes > 0 else { return nil }
            return min(1, Double(completedBytes) / Double(totalBytes))
        }
    }

    /// One named part in flight: its name and its own reading.
    public struct Active: Sendable, Hashable {
        /// The part's name (a file's path relative to the copied tree).
        public var name: String
        /// Bytes done.
        public var completedBytes: Int64
        /// Bytes expected, when known.
        public var totalBytes: Int64?
        /// Recent rate in bytes per second.
        public var bytesPerSecond: Double
    }

    private struct State {
        var completedBytes: Int64 = 0
        var totalBytes: Int64?
        var completedFiles = 0
        var totalFiles: Int?
        var currentItem: String?
        var rate: Double = 0
        var lastSampleTime: ContinuousClock.Instant
        var lastSampleBytes: Int64 = 0
        var cancelled = false
        /// Set by ``TransferProgress/finish()``: snapshot sequences end.
        var finished = false
        /// Named children not yet finished, in the order they started.
        var children: [(id: ObjectIdentifier, name: String, progress: TransferProgress)] = []
    }

    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private let state: Mutex<State>
    /// Bytes counted here are also counted there; cancelling the parent cancels this one.
    private let parent: TransferProgress?

    /// A progress for one part of a larger operation (one file of a tree): its bytes count towards
    /// this progress too, and cancelling this progress's parent stops it. A named child is listed in
    /// the parent's ``Snapshot/active`` until ``finish()``.
    public func makeChild(totalBytes: Int64? = nil, name: String? = nil) -> TransferProgress {
        let child = TransferProgress(totalBytes: totalBytes, totalFiles: nil, parent: self)
        if let name { state.withLock { $0.children.append((ObjectIdentifier(child), name, child)) } }
        return child
    }

    /// Marks the work done: ``snapshots(every:)`` sequences deliver a last snapshot and end, and a
    /// child part leaves its parent's list of active parts (its bytes stay counted). The copy
    /// engine finishes the progress it was given when its run ends (so use a new progress for each
    /// run); a caller of `Transfer.copyFile` finishes its own.
    public func finish() {
        state.withLock { $0.finished = true }
        guard let parent else { return }
        let id = ObjectIdentifier(self)
        parent.state.withLock { $0.children.removeAll { $0.id == id } }
    }

    /// Creates a progress with an optional expected total.
    public convenience init(totalBytes: Int64? = nil, totalFiles: Int? = nil) {
        self.init(totalBytes: totalBytes, totalFiles: totalFiles, parent: nil)
    }

    private init(totalBytes: Int64?, totalFiles: Int?, parent: TransferProgress?) {
        self.parent = parent
        let now = clock.now
        start = now
        var initial = State(lastSampleTime: now)
        initial.totalBytes = totalBytes
        initial.totalFiles = totalFiles
        state = Mutex(initial)
    }

    /// Records `count` more bytes done and refreshes the smoothed rate (at most every 200 ms).
    public func addBytes(_ count: Int64) {
        parent?.addBytes(count)
        let now = clock.now
        state.withLock { state in
            state.completedBytes = state.completedBytes.saturatingAdding(count)
            let interval = now - state.lastSampleTime
            if interval >= .milliseconds(200) {
                let seconds = interval.inSeconds
                let instant = Double(state.completedBytes - state.lastSampleBytes) / seconds
                state.rate = state.rate == 0 ? instant : 0.7 * state.rate + 0.3 * instant
                state.lastSampleTime = now
                state.lastSampleBytes = state.completedBytes
            }
        }
    }

    /// Takes back bytes counted for an attempt that is being retried from an earlier offset.
    public func removeBytes(_ count: Int64) {
        parent?.removeBytes(count)
        state.withLock { $0.completedBytes = max(0, $0.completedBytes - count); $0.lastSampleBytes = min($0.lastSampleBytes, $0.completedBytes) }
    }

    /// Records one more file done.
    public func addFile() { state.withLock { $0.completedFiles += 1 } }

    /// Adds to the expected totals (for tree operations that discover work as they go).
    public func addToTotals(bytes: Int64 = 0, files: Int = 0) {
        state.withLock { state in
            state.totalBytes = (state.totalBytes ?? 0).saturatingAdding(bytes)
            state.totalFiles = (state.totalFiles ?? 0).saturatingAdding(files)
        }
    }

    /// Sets the expected byte total.
    public func setTotalBytes(_ total: Int64?) { state.withLock { $0.totalBytes = total } }

    /// Names the item being worked on.
    public func setCurrentItem(_ item: String?) { state.withLock { $0.currentItem = item } }

    /// Asks the operation to stop; it throws `CancellationError` at its next check.
    public func cancel() { state.withLock { $0.cancelled = true } }

    /// `true` after ``cancel()`` on this progress or its parent.
    public var isCancelled: Bool { state.withLock { $0.cancelled } || (parent?.isCancelled ?? false) }

    /// Throws `CancellationError` when this progress or the current `Task` was cancelled.
    public func checkCancellation() throws {
        if isCancelled { throw CancellationError() }
        try Task.checkCancellation()
    }

    /// The current reading.
    /// Snapshots of this progress every `interval` (and one at once), as an `AsyncSequence`, until
    /// the progress is finished (``finish()``, after one last snapshot), the consumer stops
    /// iterating or its task is cancelled: observe instead of polling.
    ///
    /// ```swift
    /// for await snapshot in progress.snapshots(every: .milliseconds(500)) {
    ///     print(snapshot.fractionCompleted ?? 0)
    /// }
    /// ```
    public func snapshots(every interval: Duration = .milliseconds(250)) -> AsyncStream<Snapshot> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task { [self] in
                while !Task.isCancelled {
                    let done = state.withLock { $0.finished }
                    continuation.yield(snapshot)
                    if done { break }
                    try? await Task.sleep(for: interval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    public var snapshot: Snapshot {
        let elapsed = clock.now - start
        let children = state.withLock { $0.children }
        var reading = ownSnapshot(elapsed: elapsed)
        reading.active = children.map { child in
            let part = child.progress.ownSnapshot(elapsed: child.progress.clock.now - child.progress.start)
            return Active(name: child.name, completedBytes: part.completedBytes, totalBytes: part.totalBytes, bytesPerSecond: part.bytesPerSecond)
        }
        return reading
    }

    private func ownSnapshot(elapsed: Duration) -> Snapshot {
        state.withLock { state in
            let seconds = elapsed.inSeconds
            var rate = state.rate
            if rate == 0, seconds > 0 { rate = Double(state.completedBytes) / seconds }
            var eta: Duration?
            if let total = state.totalBytes, rate > 0 {
                // Capped at about 31 years: a hostile total near Int64.max must not trap the conversion.
                let remaining = min(1e9, Double(max(0, total - state.completedBytes)) / rate)
                eta = .seconds(saturating: remaining)
            }
            return Snapshot(
                completedBytes: state.completedBytes, totalBytes: state.totalBytes,
                completedFiles: state.completedFiles, totalFiles: state.totalFiles,
                elapsed: elapsed, bytesPerSecond: rate, estimatedTimeRemaining: eta,
                currentItem: state.currentItem
            )
        }
    }
}

extension Optional where Wrapped == TransferProgress {
    /// Checks the progress (if any) and the current task for cancellation.
    public func checkCancellation() throws {
        if let self { try self.checkCancellation() } else { try Task.checkCancellation() }
    }
}
