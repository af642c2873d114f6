#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import GatewayCore
import Synchronization

/// A remote file read through its provider's ranged reads into a sparse local cache file that
/// holds only the ranges read, so a reader that seeks (TIFF, MP4 atoms, an ID3v1 tag at the tail)
/// costs only what it looks at, and nothing is collected in memory.
///
/// A miss fetches one range, from the first missing byte: `initialFetch` bytes after a seek,
/// doubling while the reader goes on sequentially (up to `maximumFetch`), so a header read costs
/// one small request and a whole-file decode a few large ones. The cache file is created unlinked
/// in the temporary folder and goes when the input does.
public final class RemoteMediaInput: MediaInput, @unchecked Sendable {
    /// Fetches `length` bytes at `offset` (the provider's ranged read).
    public typealias Fetch = @Sendable (_ offset: Int64, _ length: Int64) async throws -> ByteStream

    public let size: Int64
    private let path: String
    private let fetch: Fetch
    private let cache: Int32
    private let initialFetch: Int64
    private let maximumFetch: Int64
    private let fetchBudget: Int64
    private let state = Mutex(State())

    private struct State {
        /// Cached byte ranges, sorted, disjoint and not adjacent.
        var ranges: [Range<Int64>] = []
        var lastFetchEnd: Int64 = -1
        var nextFetch: Int64 = 0
        var fetched: Int64 = 0
        var cancelled = false
        /// The ranged read under way, cancelled by ``cancel()``.
        var fetching: Task<Void, Never>?
    }

    /// Marks the `CocoaError(.fileReadTooLarge)` of a read past the fetch budget.
    public static let budgetExceededKey = "GatewayMediaFetchBudgetExceeded"

    /// A cache over `fetch` for the file `path` of `size` bytes.
    ///
    /// - Parameters:
    ///   - fetchBudget: the most bytes this input fetches; a reader asking for more fails (a
    ///     metadata read of a hostile file stops here instead of downloading it whole) with a
    ///     `CocoaError(.fileReadTooLarge)` marked with ``budgetExceededKey``. A reader that needs the
    ///     whole file (``completeDescriptor()``: PDF, WebP, GIF, SVG) gets it regardless, on disk.
    public init(path: String, size: Int64, initialFetch: Int64 = 64 << 10, maximumFetch: Int64 = 8 << 20,
                fetchBudget: Int64 = .max, fetch: @escaping Fetch) throws {
        self.path = path
        self.size = max(0, size)
        self.fetch = fetch
        self.initialFetch = max(4096, initialFetch)
        self.maximumFetch = max(self.initialFetch, maximumFetch)
        self.fetchBudget = max(0, fetchBudget)
        self.cache = try RemoteMediaInput.makeCacheFile(size: self.size, path: path)
        self.state.withLock { $0.nextFetch = self.initialFetch }
    }

    deinit { close(cache) }

    public var bytesFetched: Int64 { state.withLock { $0.fetched } }
    public var isComplete: Bool { state.withLock { Self.missing(in: 0..<size, ranges: $0.ranges) == nil } }

    /// Makes every later read fail, and stops the ranged read under way: the caller was cancelled.
    public func cancel() {
        let fetching = state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.fetching
        }
        fetching?.cancel()
    }

    public func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        guard offset >= 0, offset < size, count > 0 else { return 0 }
        let end = offset + min(Int64(count), size - offset)
        try ensure(offset..<end, sequentialHint: true, budgeted: true)
        return try readCache(at: offset, into: buffer, count: Int(end - offset))
    }

    public func completeDescriptor() throws -> Int32 {
        try ensure(0..<size, sequentialHint: false, budgeted: false)
        return cache
    }

    // MARK: - Fetching

    private func ensure(_ wanted: Range<Int64>, sequentialHint: Bool, budgeted: Bool) throws {
        while true {
            let plan: Range<Int64>? = try state.withLock { state in
                if state.cancelled { throw CancellationError() }
                guard let gap = Self.missing(in: wanted, ranges: state.ranges) else { return nil }
                var length: Int64
                if !sequentialHint {
                    // The whole gap, in ranges of at most 64 MiB (a cancellation waits for one).
                    length = min(Int64(gap.count), 64 << 20)
                } else {
                    if gap.lowerBound == state.lastFetchEnd {
                        state.nextFetch = min(maximumFetch, state.nextFetch * 2)
                    } else {
                        state.nextFetch = initialFetch
                    }
                    length = max(state.nextFetch, Int64(wanted.upperBound - gap.lowerBound))
                }
                // Stop at the next cached range and at the end of the file.
                var upper = gap.lowerBound + min(length, size - gap.lowerBound)
                if let next = state.ranges.first(where: { $0.lowerBound > gap.lowerBound }) { upper = min(upper, next.lowerBound) }
                let range = gap.lowerBound..<upper
                if budgeted, Int64(range.count) > fetchBudget - min(state.fetched, fetchBudget) {
                    var info = CocoaError.described(.fileReadTooLarge, path: path, reason:
                        "reading it needs more than \(fetchBudget) bytes of the file").userInfo
                    info[Self.budgetExceededKey] = true
                    throw CocoaError(.fileReadTooLarge, userInfo: info)
                }
                return range
            }
            guard let plan else { return }
            let got = try fetchBlocking(plan)
            state.withLock { state in
                if got > 0 { Self.insert(plan.lowerBound..<(plan.lowerBound + got), into: &state.ranges) }
                state.fetched += got
                state.lastFetchEnd = plan.lowerBound + got
            }
            if got < plan.count {
                throw FileProviderError.truncated(path: path, reason: "the server sent \(got) of the \(plan.count) bytes asked for at offset \(plan.lowerBound)")
            }
        }
    }

    /// Runs one ranged read to its end on the concurrency pool while this (media) thread waits.
    private func fetchBlocking(_ range: Range<Int64>) throws -> Int64 {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Int64, any Error>?>(nil)
        let fetch = self.fetch
        let cache = self.cache
        let task = Task {
            do {
                var position = range.lowerBound
                for try await chunk in try await fetch(range.lowerBound, Int64(range.count)) {
                    let room = range.upperBound - position
                    guard room > 0 else { break }
                    let usable = chunk.prefix(Int(min(room, Int64(chunk.count))))
                    let failure = usable.withUnsafeBytes { FileDescriptorIO.writeAll(cache, $0, at: position) }
                    if failure != 0 { throw CocoaError.posix(failure, path: "media cache", writing: true) }
                    position += Int64(usable.count)
                }
                outcome.withLock { $0 = .success(position - range.lowerBound) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        let cancelled = state.withLock { state -> Bool in
            state.fetching = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
        // Always waits for the task: it writes into the cache file, which goes with this input.
        done.wait()
        state.withLock { $0.fetching = nil }
        return try outcome.withLock { $0! }.get()
    }

    private func readCache(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        var total = 0
        while total < count {
            let got = pread(cache, buffer + total, count - total, off_t(offset) + off_t(total))
            if got < 0 {
                if errno == EINTR { continue }
                throw CocoaError.posix(errno, path: "media cache")
            }
            if got == 0 { break }
            total += got
        }
        return total
    }

    // MARK: - Ranges

    /// The first missing sub-range of `wanted`, or `nil` when all of it is cached.
    static func missing(in wanted: Range<Int64>, ranges: [Range<Int64>]) -> Range<Int64>? {
        guard !wanted.isEmpty else { return nil }
        var start = wanted.lowerBound
        for range in ranges where range.upperBound > start {
            if range.lowerBound > start { return start..<min(range.lowerBound, wanted.upperBound) }
            start = range.upperBound
            if start >= wanted.upperBound { return nil }
        }
        return start < wanted.upperBound ? start..<wanted.upperBound : nil
    }

    /// Adds `new` to sorted, disjoint ranges, merging overlapping and adjacent ones.
    static func insert(_ new: Range<Int64>, into ranges: inout [Range<Int64>]) {
        guard !new.isEmpty else { return }
        var lower = new.lowerBound
        var upper = new.upperBound
        var kept: [Range<Int64>] = []
        kept.reserveCapacity(ranges.count + 1)
        var placed = false
        for range in ranges {
            if range.upperBound < lower {
                kept.append(range)
            } else if range.lowerBound > upper {
                if !placed { kept.append(lower..<upper); placed = true }
                kept.append(range)
            } else {
                lower = min(lower, range.lowerBound)
                upper = max(upper, range.upperBound)
            }
        }
        if !placed { kept.append(lower..<upper) }
        ranges = kept
    }

    private static func makeCacheFile(size: Int64, path: String) throws -> Int32 {
        let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(folder)/gateway-media-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw CocoaError.posix(errno, path: folder, writing: true) }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        // A sparse file of the remote size: unfetched ranges take no disk space.
        guard ftruncate(descriptor, off_t(size)) == 0 else {
            let code = errno
            close(descriptor)
            throw CocoaError.posix(code, path: folder, writing: true)
        }
        return descriptor
    }
}
