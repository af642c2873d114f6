import Foundation

/// Entity-tag comparison (RFC 9110 section 8.8.3.2) and lists of tags (`If-Match: "a", "b"`).
package enum EntityTag {
    /// The tags of a comma-separated header.
    package static func list(_ header: String) -> [String] {
        header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Strong comparison: neither is weak, and they are the same.
    package static func strongEqual(_ a: String, _ b: String) -> Bool { !a.hasPrefix("W/") && !b.hasPrefix("W/") && a == b }

    /// Weak comparison: the same opaque tag, weak or not.
    package static func weakEqual(_ a: String, _ b: String) -> Bool {
        func opaque(_ tag: String) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag) }
        return opaque(a) == opaque(b)
    }
}
