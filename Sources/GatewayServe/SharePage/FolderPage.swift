import Foundation
import GatewayCore
import GatewayServeRequests

/// One page of a folder, chosen while the listing streams past: at most two pages of rows are
/// held at any time, whatever the folder's size.
struct FolderPage: Sendable {
    /// The rows, in order.
    var items: [FileObject]
    /// Entries in the folder.
    var total: Int
    /// Entries before the first row.
    var before: Int
    /// Whether there are entries after the last row.
    var hasNext: Bool

    static func isFolder(_ item: FileObject) -> Bool { item.isDirectory || item.isLinkToFolder }

    /// Lists `path` and keeps the page `query` asks for, of the entries `includes` accepts. A
    /// cursor past either end (the rows it followed were deleted) gives the first page.
    static func read(_ provider: any FileProviderBasic, path: String, query: FolderPageQuery,
                     pageSize: Int = FolderPageQuery.pageSize,
                     includes: @Sendable (FileObject) -> Bool = { _ in true }) async throws -> FolderPage {
        let page = try await select(provider, path: path, query: query, pageSize: pageSize, includes: includes)
        guard page.items.isEmpty, page.total > 0, query.slice != .first else { return page }
        var first = query
        first.slice = .first
        return try await select(provider, path: path, query: first, pageSize: pageSize, includes: includes)
    }

    private static func select(_ provider: any FileProviderBasic, path: String, query: FolderPageQuery, pageSize: Int,
                               includes: (FileObject) -> Bool) async throws -> FolderPage {
        let descending = query.descending
        // "before" is "after" in the reversed order.
        let (cursor, reversed): (FolderSortKey?, Bool) = switch query.slice {
        case .first: (nil, false)
        case .after(let key): (key, false)
        case .before(let key): (key, true)
        }
        // Whether `a` comes first in the order this scan keeps.
        func first(_ a: FolderSortKey, _ b: FolderSortKey) -> Bool {
            reversed ? b.precedes(a, descending: descending) : a.precedes(b, descending: descending)
        }
        var kept: [(key: FolderSortKey, item: FileObject)] = []
        var total = 0, passed = 0, candidates = 0
        func trim() {
            kept.sort { first($0.key, $1.key) }
            kept.removeLast(max(0, kept.count - pageSize))
        }
        for try await listing in provider.contentsOfDirectory(path: path, pageSize: 1000) {
            for entry in listing.entries where includes(entry) {
                total += 1
                let key = FolderSortKey(entry, sort: query.sort)
                if let cursor, !first(cursor, key) {
                    passed += 1
                    continue
                }
                candidates += 1
                kept.append((key, entry))
                if kept.count >= 2 * pageSize { trim() }
            }
        }
        trim()
        var items = kept.map(\.item)
        if reversed {
            items.reverse()
            // `passed` entries are at or after the cursor; `candidates` before it.
            return FolderPage(items: items, total: total, before: candidates - items.count, hasNext: passed > 0)
        }
        return FolderPage(items: items, total: total, before: passed, hasNext: candidates > items.count)
    }
}
