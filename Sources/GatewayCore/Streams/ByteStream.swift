public import Foundation
import Synchronization

/// File contents as an `AsyncSequence` of `Data` chunks: the currency of every read and write, so
/// that a file of any size moves through bounded memory.
///
/// A byte stream is single-pass: it wraps an open resource (a file descriptor, an HTTP response) and
/// is meant to be iterated once. The resource is released when the stream is finished or dropped.
public struct ByteStream: AsyncSequence, Sendable {
    public typealias Element = Data

    /// Produces the next chunk, or `nil` at the end of the stream.
    public typealias Next = @Sendable () async throws -> Data?

    /// The number of bytes the stream will deliver, when known in advance (used for progress,
    /// `Content-Length`, and to detect truncation).
    public let expectedLength: Int64?
    private let nextChunk: Next

    /// Creates a stream from a chunk producer.
    public init(expectedLength: Int64?, next: @escaping Next) {
        self.expectedLength = expectedLength
        self.nextChunk = next
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(next: nextChunk) }

    /// Iterates chunks. Empty chunks are skipped.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var nextChunk: Next?

        init(next: @escaping Next) { nextChunk = next }

        public mutating func next() async throws -> Data? {
            while let nextChunk {
                do {
                    guard let chunk = try await nextChunk() else {
                        self.nextChunk = nil
                        return nil
                    }
                    if !chunk.isEmpty { return chunk }
                } catch {
                    self.nextChunk = nil
                    throw error
                }
            }
            return nil
        }
    }

    /// Collects the whole stream into memory. Only for small contents.
    public func collect(limit: Int = .max) async throws -> Data {
        var data = Data()
        if let expectedLength, expectedLength <= Int64(limit) { data.reserveCapacity(Int(expectedLength)) }
        for try await chunk in self {
            guard data.count + chunk.count <= limit else {
                throw CocoaError(.fileReadTooLarge)
            }
            data.append(chunk)
        }
        return data
    }
}

extension ByteStream {
    /// A stream over bytes already in memory, delivered in chunks of `chunkSize`.
    public init(data: Data, chunkSize: Int = 1 << 20) {
        let offset = Mutex(0)
        self.init(expectedLength: Int64(data.count)) {
            offset.withLock { position -> Data? in
                guard position < data.count else { return nil }
                let end = Swift.min(position + chunkSize, data.count)
                defer { position = end }
                return data.subdata(in: (data.startIndex + position)..<(data.startIndex + end))
            }
        }
    }

    /// A stream over a local file read with Foundation's `FileHandle`, chunk by chunk.
    ///
    /// - Throws: a `CocoaError` naming `path` when the file cannot be opened.
    public static func contentsOfFile(at url: URL, chunkSize: Int = 1 << 20) throws -> ByteStream {
        let handle = try FileHandle(forReadingFrom: url)
        let length = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
        let box = HandleBox(handle)
        return ByteStream(expectedLength: length) {
            try box.read(chunkSize)
        }
    }

    /// The same bytes, with `beforeEach` called before every chunk is asked for (throw to stop, e.g.
    /// on cancellation) and `afterEach` with every chunk delivered (to count or hash it).
    public func observing(beforeEach: @escaping @Sendable () throws -> Void,
                          afterEach: @escaping @Sendable (Data) -> Void) -> ByteStream {
        let box = IteratorBox(makeAsyncIterator())
        return ByteStream(expectedLength: expectedLength) {
            try beforeEach()
            guard let chunk = try await box.next() else { return nil }
            afterEach(chunk)
            return chunk
        }
    }

    /// Exactly `length` bytes of this stream: a source that ends short, or sends more, fails with
    /// ``FileProviderError/truncated(path:reason:)`` naming `path` (and `what` the bytes were, e.g.
    /// `"a range"`) before a byte beyond `length` is handed on. The one exact-length check of
    /// ranged reads and ranged uploads. Pulled by one consumer at a time.
    public func exactly(_ length: Int64, path: String, what: String = "the file") -> ByteStream {
        let box = IteratorBox(makeAsyncIterator())
        let counter = AtomicWrite.ByteCount()
        return ByteStream(expectedLength: length) {
            guard let chunk = try await box.next() else {
                let received = counter.value
                guard received == length else {
                    throw FileProviderError.truncated(path: path, reason: "received \(received) of \(length) bytes of \(what)")
                }
                return nil
            }
            counter.add(chunk.count)
            guard counter.value <= length else {
                throw FileProviderError.truncated(path: path, reason: "the source sent more than \(length) bytes of \(what)")
            }
            return chunk
        }
    }

    /// Wraps any `AsyncSequence` of `Data` (for example standard input read asynchronously).
    ///
    /// The sequence is iterated by a single consumer; do not share the resulting stream.
    public init<S: AsyncSequence>(_ sequence: S, expectedLength: Int64? = nil) where S.Element == Data, S: Sendable {
        let box = IteratorBox(sequence.makeAsyncIterator())
        self.init(expectedLength: expectedLength) { try await box.next() }
    }
}

extension ByteStream {
    /// `count` streams one after another, each made by `open` (given its index) only when the one
    /// before it ended, so at most one is open at a time: a file joined from parts held apart.
    public static func concatenating(_ count: Int, expectedLength: Int64?,
                                     open: @escaping @Sendable (Int) async throws -> ByteStream) -> ByteStream {
        let parts = ConcatenatedStreams(count: count, open: open)
        return ByteStream(expectedLength: expectedLength) { try await parts.next() }
    }
}

/// The state of ``ByteStream/concatenating(_:expectedLength:open:)``; like ``IteratorBox``, only
/// ever touched by the stream's one consumer, one call at a time.
private final class ConcatenatedStreams: @unchecked Sendable {
    private let count: Int
    private let open: @Sendable (Int) async throws -> ByteStream
    private var opened = 0
    private var current: ByteStream.AsyncIterator?

    init(count: Int, open: @escaping @Sendable (Int) async throws -> ByteStream) {
        self.count = count
        self.open = open
    }

    func next() async throws -> Data? {
        while true {
            if current == nil {
                guard opened < count else { return nil }
                current = try await open(opened).makeAsyncIterator()
                opened += 1
            }
            if let chunk = try await current?.next() { return chunk }
            current = nil
        }
    }
}

/// Owns a `FileHandle` and closes it when the stream is dropped.
private final class HandleBox: Sendable {
    private let handle: Mutex<FileHandle?>

    init(_ handle: FileHandle) { self.handle = Mutex(handle) }

    func read(_ count: Int) throws -> Data? {
        try handle.withLock { handle -> Data? in
            guard let current = handle else { return nil }
            let data = try current.read(upToCount: count) ?? Data()
            if data.isEmpty {
                try? current.close()
                handle = nil
                return nil
            }
            return data
        }
    }

    deinit { handle.withLock { try? $0?.close() } }
}

/// Holds an iterator for a single consumer; the iterator is only ever touched by one task at a time.
final class IteratorBox<Iterator: AsyncIteratorProtocol>: @unchecked Sendable where Iterator.Element == Data {
    private var iterator: Iterator

    init(_ iterator: Iterator) { self.iterator = iterator }

    func next() async throws -> Data? { try await iterator.next() }
}
