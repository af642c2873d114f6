import Foundation

/// The WebDAV `Timeout` header (RFC 4918 section 10.7): `Second-3600`, `Infinite`, or a list of
/// choices in order of preference.
package enum TimeoutHeader {
    /// The first choice the server honours, capped at `longest` (`Infinite` gets `longest`);
    /// `fallback` when the header is absent or names nothing usable.
    package static func parse(_ header: String?, longest: Duration, fallback: Duration) -> Duration {
        guard let header, header.utf8.count <= 4096 else { return fallback }
        let cap = longest.components.seconds
        for part in header.split(separator: ",") {
            let value = part.trimmingCharacters(in: .whitespaces)
            if value.caseInsensitiveCompare("Infinite") == .orderedSame { return longest }
            if value.lowercased().hasPrefix("second-"), let seconds = UInt64(value.dropFirst(7)), seconds > 0 {
                return .seconds(seconds >= UInt64(cap) ? cap : Int64(seconds))
            }
        }
        return fallback
    }
}
