import Foundation

/// A `Range` header's single byte range (RFC 9110 section 14.1.2); several ranges are served whole.
package enum ByteRange: Equatable, Sendable {
    case whole
    case unsatisfiable
    case range(start: Int64, count: Int64)

    /// The range `header` asks of a representation of `size` bytes.
    package static func parse(_ header: String, size: Int64) -> ByteRange {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes="), !text.contains(",") else { return .whole }
        let spec = text.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            // The last N bytes.
            guard let suffix = Int64(last), suffix >= 0 else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            let count = min(suffix, size)
            return .range(start: size - count, count: count)
        }
        guard let start = Int64(first), start >= 0 else { return .whole }
        guard start < size else { return .unsatisfiable }
        var end = size - 1
        if !last.isEmpty {
            guard let value = Int64(last), value >= start else { return .whole }
            end = min(value, size - 1)
        }
        return .range(start: start, count: end - start + 1)
    }
}
