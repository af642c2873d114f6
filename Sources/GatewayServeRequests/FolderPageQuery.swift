package import Foundation
package import GatewayCore

/// What a folder page shows, from its query string: the order (`sort`, `order`), the slice
/// (`after` or `before` a cursor) and the view (`view=gallery`). Unknown or bad values fall back
/// to the defaults; nothing in a query can make a page bigger than ``pageSize`` rows.
package struct FolderPageQuery: Equatable, Sendable {
    package enum Sort: String, CaseIterable, Sendable { case name, size, date }
    package enum View: String, Sendable { case list, gallery }
    package enum Slice: Equatable, Sendable {
        case first
        case after(FolderSortKey)
        case before(FolderSortKey)
    }

    /// Rows on one page.
    package static let pageSize = 100

    package var sort: Sort = .name
    package var descending = false
    package var view: View = .list
    package var slice: Slice = .first

    package init() {}

    /// The query of `parameters` (decoded `key=value` pairs, first one wins).
    package init(_ parameters: [(key: String, value: String)]) {
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
    package func string(sort: Sort? = nil, descending: Bool? = nil, view: View? = nil, slice: Slice = .first) -> String {
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

    package static let valueCharacters: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        set.insert(charactersIn: "-._~")
        return set
    }()

    package static func escape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: valueCharacters) ?? ""
    }

    /// The `key=value` pairs of a raw query string, percent-decoded (`+` is a space).
    package static func parameters(_ query: String?) -> [(key: String, value: String)] {
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
package struct FolderSortKey: Sendable, Equatable {
    package static func == (lhs: FolderSortKey, rhs: FolderSortKey) -> Bool {
        lhs.isFolder == rhs.isFolder && lhs.value == rhs.value && lhs.name.utf8.elementsEqual(rhs.name.utf8)
    }

    package var isFolder: Bool
    /// The size or the modification time in milliseconds (-1 when unknown); 0 for sort by name.
    package var value: Int64
    package var name: String
    private var folded: String

    package init(isFolder: Bool, value: Int64, name: String) {
        self.isFolder = isFolder
        self.value = value
        self.name = name
        self.folded = name.lowercased()
    }

    package init(_ item: FileObject, sort: FolderPageQuery.Sort) {
        let value: Int64
        switch sort {
        case .name: value = 0
        case .size: value = item.size ?? -1
        case .date: value = item.modificationDate.map { Int64(saturating: $0.timeIntervalSince1970 * 1000) } ?? -1
        }
        self.init(isFolder: item.isDirectory || item.isLinkToFolder, value: value, name: item.name)
    }

    /// `d.VALUE.NAME` or `f.VALUE.NAME`.
    package var cursor: String { (isFolder ? "d." : "f.") + String(value) + "." + name }

    package init?(cursor: String) {
        let parts = cursor.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "d" || parts[0] == "f", let value = Int64(parts[1]), !parts[2].isEmpty,
              parts[2].utf8.count <= 4096 else { return nil }
        self.init(isFolder: parts[0] == "d", value: value, name: String(parts[2]))
    }

    /// Whether `self` comes before `other` in the page order.
    package func precedes(_ other: FolderSortKey, descending: Bool) -> Bool {
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
