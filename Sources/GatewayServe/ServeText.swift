#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayCore
import GatewayServeRequests

/// Text the server writes: XML character data and HTTP dates.
enum ServeText {
    /// `text` as XML character data, characters XML cannot carry replaced (names come from disks).
    static func xml(_ text: String) -> String { XMLText.escaped(text, replacingInvalid: true) }

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110).
    static func httpDate(_ date: Date) -> String {
        let parts = utc(date)
        return "\(days[Int(parts.tm_wday) % 7]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon) % 12]) \(1900 + parts.tm_year) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// An RFC 3339 time in UTC (`creationdate`).
    static func iso8601(_ date: Date) -> String {
        let parts = utc(date)
        return "\(1900 + parts.tm_year)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// `2026-11-28 14:03 UTC`, for people.
    static func readableDate(_ date: Date) -> String {
        let parts = utc(date)
        return "\(1900 + parts.tm_year)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)) UTC"
    }

    /// A time a file tells of itself (a photo's time taken, `2024-05-06T07:08:09`, in the camera's
    /// own clock, no zone) as a person reads it: `2024-05-06 07:08`. Anything else as given.
    static func readableLocalTime(_ text: String) -> String {
        let characters = Array(text)
        guard characters.count >= 16, characters[10] == "T" || characters[10] == " ", characters[13] == ":",
              characters[0..<10].allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-" || $0 == ":") }) else { return text }
        return String(characters[0..<10]).replacingOccurrences(of: ":", with: "-") + " " + String(characters[11..<16])
    }

    /// `date` broken down in UTC (clamped to the years 1970 to 9999).
    static func utc(_ date: Date) -> tm {
        var seconds = time_t(max(0, min(date.timeIntervalSince1970, 253_402_300_799)))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return parts
    }

    /// Two digits.
    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// An HTTP date (IMF-fixdate, or the obsolete RFC 850 and asctime forms), or `nil`.
    static func parseHTTPDate(_ text: String) -> Date? {
        let formats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
