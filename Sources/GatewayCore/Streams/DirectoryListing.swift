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
/// Given a page size, pages hold at most that many entries, and the last non-empty page is the one
/// marked ``ListingPage/isLast`` (no empty page trails it; an empty folder gives one empty last page),
/// whatever sizes the backend's own pages have: entries are held back until the next one, or the
/// end, is known.
///
/// Each call to `makeAsyncIterator()` starts a fresh listing from the backend.
public struct DirectoryListing: AsyncSequence, Sendable {
    public typealias Element = ListingPage

    /// A source of pages for one pass: returns the next page, or `nil` if it has nothing more.
    public typealias PageSource = () async throws -> ListingPage?

    /// The folder being listed (normalized remote path).
    public let path: String
    /// The most entries a page holds, when the listing shapes pages (see the type's notes).
    public let pageSize: Int?
    private let makeSource: @Sendable () -> PageSource

    /// Creates a listing. `makeSource` is called once per iteration and returns the page source;
    /// with `pageSize`, its pages are re-cut to hold at most that many entries, the last non-empty
    /// one marked as last.
    public init(path: String, pageSize: Int? = nil, makeSource: @escaping @Sendable () -> PageSource) {
        self.path = path
        self.pageSize = pageSize.map { Swift.max(1, $0) }
        self.makeSource = makeSource
    }

    /// A listing that fails on first use (for example when the path was invalid).
    public init(path: String, failure: any Error) {
        self.init(path: path, makeSource: { { throw failure } })
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(path: path, pageSize: pageSize, source: makeSource())
    }

    /// Iterates pages, enforcing the truncation rule (and the page size, when set).
    public struct AsyncIterator: AsyncIteratorProtocol {
        let path: String
        let pageSize: Int?
        var source: PageSource?
        /// Entries received from the source, handed out up to ``taken`` (page sizing only).
        private var pending: [FileObject] = []
        private var taken = 0
        /// Whether the source delivered its last page (page sizing only).
        private var sourceEnded = false

        init(path: String, pageSize: Int?, source: @escaping PageSource) {
            self.path = path
            self.pageSize = pageSize
            self.source = source
        }

        public mutating func next() async throws -> ListingPage? {
            guard let source else { return nil }
            do {
                guard let pageSize else {
                    let page = try await pull(source)
                    if page.isLast { self.source = nil }
                    return page
                }
                // Hand out a full page only once an entry after it is known, so the last page is
                // never an empty one.
                while !sourceEnded && pending.count - taken <= pageSize {
                    let page = try await pull(source)
                    if taken > 0 {
                        // Drop what was handed out before adding more (no shifting per page).
                        pending.removeFirst(taken)
                        taken = 0
                    }
                    if pending.isEmpty { pending = page.entries } else { pending += page.entries }
                    sourceEnded = page.isLast
                }
                let count = Swift.min(pageSize, pending.count - taken)
                let entries = count == pending.count ? pending : Array(pending[taken..<(taken + count)])
                taken += count
                let isLast = sourceEnded && taken == pending.count
                if taken == pending.count {
                    pending = []
                    taken = 0
                }
                if isLast { self.source = nil }
                return ListingPage(entries: entries, isLast: isLast)
            } catch {
                self.source = nil
                throw error
            }
        }

        /// The source's next page; a source that stops before its last page is a truncated listing.
        private func pull(_ source: PageSource) async throws -> ListingPage {
            try Task.checkCancellation()
            guard let page = try await source() else {
                throw FileProviderError.truncated(path: path, reason: "the listing of \(path) stopped before its last page")
            }
            return page
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
