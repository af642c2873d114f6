/// One page of a directory listing.
public struct ListingPage: Sendable {
    /// The items on this page, in the backend's order. Never includes the listed folder itself.
    public var entries: [FileObject]
    /// `true` on the page the backend marked as the end of the listing. A listing whose source stops
    /// without such a page is reported as truncated, never as complete.
    public var isLast: Bool

    /// Creates a page.
    public init(entries: [FileObject], isLast: Bool) {
        self.entries = entries
        self.isLast = isLast
    }
}

/// A folder's contents as an `AsyncSequence` of pages, fetched lazily as the caller iterates.
///
/// Backends hand out pages while their response is still arriving, so a folder of any size is listed
/// in bounded memory. Iteration throws ``FileProviderError/truncated(path:reason:)`` if the source ends
/// before a page marked ``ListingPage/isLast``: a cut-off listing can never pass as complete.
///
/// Each call to `makeAsyncIterator()` starts a fresh listing from the backend.
public struct DirectoryListing: AsyncSequence, Sendable {
    public typealias Element = ListingPage

    /// A source of pages for one pass: returns the next page, or `nil` if it has nothing more.
    public typealias PageSource = () async throws -> ListingPage?

    /// The folder being listed (normalized remote path).
    public let path: String
    private let makeSource: @Sendable () -> PageSource

    /// Creates a listing. `makeSource` is called once per iteration and returns the page source.
    public init(path: String, makeSource: @escaping @Sendable () -> PageSource) {
        self.path = path
        self.makeSource = makeSource
    }

    /// A listing that fails on first use (for example when the path was invalid).
    public init(path: String, failure: any Error) {
        self.init(path: path, makeSource: { { throw failure } })
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(path: path, source: makeSource())
    }

    /// Iterates pages, enforcing the truncation rule.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let path: String
        var source: PageSource?

        init(path: String, source: @escaping PageSource) {
            self.path = path
            self.source = source
        }

        public mutating func next() async throws -> ListingPage? {
            guard let source else { return nil }
            do {
                try Task.checkCancellation()
                guard let page = try await source() else {
                    self.source = nil
                    throw FileProviderError.truncated(path: path, reason: "the listing of \(path) stopped before its last page")
                }
                if page.isLast { self.source = nil }
                return page
            } catch {
                self.source = nil
                throw error
            }
        }
    }

    /// Every entry, page after page, as one flat sequence.
    public var entries: Entries { Entries(listing: self) }

    /// Collects the whole listing. Convenient for small folders; prefer iterating pages for large ones.
    public func collectAll() async throws -> [FileObject] {
        var all: [FileObject] = []
        for try await page in self { all += page.entries }
        return all
    }

    /// The entries of a ``DirectoryListing`` as a flat `AsyncSequence`.
    public struct Entries: AsyncSequence, Sendable {
        public typealias Element = FileObject
        let listing: DirectoryListing

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(pages: listing.makeAsyncIterator())
        }

        /// Iterates entries across pages.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var pages: DirectoryListing.AsyncIterator
            var buffer: [FileObject] = []
            var index = 0

            public mutating func next() async throws -> FileObject? {
                while index >= buffer.count {
                    guard let page = try await pages.next() else { return nil }
                    buffer = page.entries
                    index = 0
                }
                defer { index += 1 }
                return buffer[index]
            }
        }
    }
}
