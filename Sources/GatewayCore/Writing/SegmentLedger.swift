import Synchronization

/// The bookkeeping every ``SegmentedFileWriter`` needs, whatever carries the bytes: ranges are
/// taken once, inside the file and never overlapping; bytes the server acknowledged are counted,
/// so a commit with a hole fails; and the file is finished once (committed or removed).
public final class SegmentLedger: Sendable {
    private struct State {
        var ranges: [(start: Int64, length: Int64)] = []
        var acknowledged: Int64 = 0
        var finished = false
    }

    private let state = Mutex(State())
    /// The whole file's size.
    public let size: Int64
    /// The file's path, for messages.
    public let path: String

    /// Creates the ledger of a `size`-byte file at `path`.
    public init(size: Int64, path: String) {
        self.size = size
        self.path = path
    }

    /// Claims `offset..<offset+length` for one writer.
    ///
    /// - Throws: ``FileProviderError/invalidPath(path:reason:)`` for an empty range, one outside
    ///   the file, or one that overlaps a range already taken.
    public func take(offset: Int64, length: Int64) throws {
        guard offset >= 0, length > 0, offset <= size, length <= size - offset else {
            throw FileProviderError.invalidPath(path: path, reason: "a range at \(offset) of \(length) bytes lies outside \(size) bytes")
        }
        let overlaps = state.withLock { state -> Bool in
            if state.ranges.contains(where: { offset < $0.start + $0.length && $0.start < offset + length }) { return true }
            state.ranges.append((offset, length))
            return false
        }
        guard !overlaps else {
            throw FileProviderError.invalidPath(path: path, reason: "a range at \(offset) of \(length) bytes overlaps another")
        }
    }

    /// Counts `length` bytes of a taken range as held by the server.
    public func acknowledge(_ length: Int64) {
        state.withLock { $0.acknowledged += length }
    }

    /// Fails with ``FileProviderError/truncated(path:reason:)`` unless every byte was acknowledged.
    public func checkComplete() throws {
        let covered = state.withLock { $0.acknowledged }
        guard covered == size else {
            throw FileProviderError.truncated(path: path, reason: "sent \(covered) of \(size) bytes; nothing was written")
        }
    }

    /// Marks the file finished; `true` the first time only (so an abort removes it at most once,
    /// and never after a commit).
    @discardableResult
    public func finish() -> Bool {
        state.withLock { state in
            defer { state.finished = true }
            return !state.finished
        }
    }
}
