/// A pull-driven `AsyncSequence`: each element is produced only when the consumer asks for it, so a
/// slow consumer naturally holds the producer back (back-pressure) and nothing piles up in memory.
///
/// `makeNext` is called once per iteration and returns the function that produces elements.
public struct PullSequence<Element: Sendable>: AsyncSequence, Sendable {
    /// Produces the next element, or `nil` at the end.
    public typealias Next = () async throws -> Element?

    private let makeNext: @Sendable () -> Next

    /// Creates the sequence.
    public init(_ makeNext: @escaping @Sendable () -> Next) {
        self.makeNext = makeNext
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(next: makeNext()) }

    /// The iterator; finishes for good after the first `nil` or error.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var nextElement: Next?

        init(next: @escaping Next) { nextElement = next }

        public mutating func next() async throws -> Element? {
            guard let nextElement else { return nil }
            do {
                if let element = try await nextElement() { return element }
                self.nextElement = nil
                return nil
            } catch {
                self.nextElement = nil
                throw error
            }
        }
    }
}

extension PullSequence {
    /// The elements of every batch `pages` yields, in order, one at a time (a listing's pages as
    /// entries, change pages as events): one batch is held at a time.
    public static func flattening<Pages: AsyncSequence & Sendable, Batch: Sendable>(
        _ pages: Pages, _ elements: @escaping @Sendable (Pages.Element) -> Batch
    ) -> PullSequence<Element> where Batch: RandomAccessCollection, Batch.Element == Element, Batch.Index == Int {
        PullSequence {
            var iterator = pages.makeAsyncIterator()
            var batch: Batch?
            var index = 0
            return {
                while batch == nil || index == batch!.endIndex {
                    guard let next = try await iterator.next() else { return nil }
                    batch = elements(next)
                    index = batch!.startIndex
                }
                defer { index += 1 }
                return batch![index]
            }
        }
    }
}
