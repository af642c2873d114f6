import Foundation
import GatewayCore

/// What a folder page shows, from its query string: the order (`sort`, `order`), the slice
/// (`after` or `before` a cursor) and the view (`view=gallery`). Unknown or bad values fall back
/// to the defaults; nothing in a query can make a page bigger than ``pageSize`` rows.
struct FolderPageQuery: Equatable, Sendable {
    enum Sort: String, CaseIterable, Sendable { case name, size, date }
    enum View: String, Sendable { case list, gallery }
    enum Slice: Equatable, Sendable {
        case first
        case after(FolderSortKey)
        case before(FolderSortKey)
    }

    /// Rows on one page.
    static let pageSize = 100

    var sort: Sort = .name
    var descending = false
    var view: View = .list
    var slice: Slice = .first

    init() {}

    /// The query of `parameters` (decoded `key=value` pairs, first one wins).
    init(_ parameters: [(key: String, value: String)]) {
        func value(_ key: String) -> String? { parameters.first { $0.key == key }?.value }
        sort = value("sort").flatMap(Sort.init(rawValue:)) ?? .name
        descending = value("order") == "desc"
        view = value("view").flatMap(View.init(rawValue:)) ?? .list
        if let after = value("after").flatMap(FolderSortKey.init(cursor:)) {
            slice = .after(after)
        } else if let before = value("before").flatMap(FolderSortKey.init(cursor:)) {
            slice = .before(before)
        }
    }

    /// The query string (with its `?`) of this query with other values; defaults are left out.
    func string(sort: Sort? = nil, descending: Bool? = nil, view: View? = nil, slice: Slice = .first) -> String {
        var parts: [String] = []
        let sort = sort ?? self.sort, descending = descending ?? self.descending, view = view ?? self.view
        if sort != .name { parts.append("sort=\(sort.rawValue)") }
        if descending { parts.append("order=desc") }
        if view != .list { parts.append("view=\(view.rawValue)") }
        switch slice {
        case .first: break
        case .after(let key): parts.append("after=" + Self.escape(key.cursor))
        case .before(let key): parts.append("before=" + Self.escape(key.cursor))
        }
        return parts.isEmpty ? "?" : "?" + parts.joined(separator: "&")
    }

    static let valueCharacters: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        set.insert(charactersIn: "-._~")
        return set
    }()

    static func escape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: valueCharacters) ?? ""
    }

    /// The `key=value` pairs of a raw query string, percent-decoded (`+` is a space).
    static func parameters(_ query: String?) -> [(key: String, value: String)] {
        guard let query, !query.isEmpty, query.utf8.count <= 8192 else { return [] }
        return query.split(separator: "&").prefix(32).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}

/// Where an item falls in a folder page's order: folders first, then the sort value, then the
/// name (case folded, then byte for byte, so two entries never tie; equality is byte for byte too). A cursor is the key of the
/// last (or first) row shown, so a page is "the next rows after this one" whatever changed in
/// the folder meanwhile, and a page of a 100,000-entry folder holds 100 rows, not 100,000.
struct FolderSortKey: Sendable, Equatable {
    static func == (lhs: FolderSortKey, rhs: FolderSortKey) -> Bool {
        lhs.isFolder == rhs.isFolder && lhs.value == rhs.value && lhs.name.utf8.elementsEqual(rhs.name.utf8)
    }

    var isFolder: Bool
    /// The size or the modification time in milliseconds (-1 when unknown); 0 for sort by name.
    var value: Int64
    var name: String
    private var folded: String

    init(isFolder: Bool, value: Int64, name: String) {
        self.isFolder = isFolder
        self.value = value
        self.name = name
        self.folded = name.lowercased()
    }

    init(_ item: FileObject, sort: FolderPageQuery.Sort) {
        let value: Int64
        switch sort {
        case .name: value = 0
        case .size: value = item.size ?? -1
        case .date: value = item.modificationDate.map { Int64(saturating: $0.timeIntervalSince1970 * 1000) } ?? -1
        }
        self.init(isFolder: FolderPage.isFolder(item), value: value, name: item.name)
    }

    /// `d.VALUE.NAME` or `f.VALUE.NAME`.
    var cursor: String { (isFolder ? "d." : "f.") + String(value) + "." + name }

    init?(cursor: String) {
        let parts = cursor.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "d" || parts[0] == "f", let value = Int64(parts[1]), !parts[2].isEmpty,
              parts[2].utf8.count <= 4096 else { return nil }
        self.init(isFolder: parts[0] == "d", value: value, name: String(parts[2]))
    }

    /// Whether `self` comes before `other` in the page order.
    func precedes(_ other: FolderSortKey, descending: Bool) -> Bool {
        if isFolder != other.isFolder { return isFolder }
        let ascending: Bool
        if value != other.value {
            ascending = value < other.value
        } else if folded != other.folded {
            ascending = folded < other.folded
        } else if !name.utf8.elementsEqual(other.name.utf8) {
            // Byte for byte: Swift's string comparison calls the composed and decomposed
            // spellings of a name equal, and two entries must never tie.
            ascending = name.utf8.lexicographicallyPrecedes(other.name.utf8)
        } else {
            return false
        }
        return descending ? !ascending : ascending
    }
}

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
