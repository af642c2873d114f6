package import Foundation

/// Dates as servers send them: HTTP dates (RFC 1123, e.g. `Sat, 21 Nov 2026 13:23:43 GMT`: WebDAV's
/// `getlastmodified`, `Last-Modified` and `Date` headers) and RFC 3339 (`2026-11-21T13:23:43Z`:
/// WebDAV's `creationdate`, S3's `LastModified`). Parsed by hand: listings of 100,000 entries parse
/// 100,000 dates. Hostile numbers give `nil`, never a trap.
package enum InternetDate {
    private static let months: [Substring: Int] = [
        "Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6,
        "Jul": 7, "Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12,
    ]

    /// Parses an RFC 1123 date (also RFC 850's `Saturday, 21-Nov-26 13:23:43 GMT`).
    package static func http(_ text: String) -> Date? {
        if let date = fixdate(text) { return date }
        // Fields split at spaces and dashes, by bytes (a listing parses one date per entry):
        // ["Sat,", "21", "Nov", "2026", "13", "23", "43", "GMT"] with ":" splitting the clock too.
        var fields: [Substring.UTF8View] = []
        var rest = Substring(text).utf8
        while fields.count < 8 {
            rest = rest.drop { $0 == 0x20 || $0 == 0x2D || $0 == 0x3A }
            guard !rest.isEmpty else { break }
            let field = rest.prefix { $0 != 0x20 && $0 != 0x2D && $0 != 0x3A }
            fields.append(field)
            rest = rest[field.endIndex...]
        }
        func number(_ index: Int) -> Int? {
            guard index < fields.count, !fields[index].isEmpty, fields[index].count <= 4,
                  fields[index].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return fields[index].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        guard fields.count >= 7, let day = number(1), let month = months[Substring(fields[2])], var year = number(3),
              let hour = number(4), let minute = number(5), let second = number(6) else { return nil }
        if year < 100 { year += year < 70 ? 2000 : 1900 }
        return utc(year: year, month: month, day: day, hour: hour, minute: minute, second: second, fraction: 0, offset: 0)
    }

    /// The usual form, RFC 9110's IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, 29 bytes), read at
    /// fixed offsets; `nil` for anything else (the general parser then tries).
    private static func fixdate(_ text: String) -> Date? {
        let result: Date?? = text.utf8.withContiguousStorageIfAvailable { bytes -> Date? in
            guard bytes.count == 29, bytes[3] == 0x2C, bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20, bytes[16] == 0x20,
                  bytes[19] == 0x3A, bytes[22] == 0x3A, bytes[25] == 0x20 else { return nil }
            func number(_ start: Int, _ count: Int) -> Int? {
                var value = 0
                for index in start..<(start + count) {
                    let byte = bytes[index]
                    guard byte >= 0x30, byte <= 0x39 else { return nil }
                    value = value * 10 + Int(byte - 0x30)
                }
                return value
            }
            guard let day = number(5, 2), let year = number(12, 4), let hour = number(17, 2), let minute = number(20, 2),
                  let second = number(23, 2),
                  let month = months[Substring(decoding: UnsafeBufferPointer(rebasing: bytes[8..<11]), as: UTF8.self)] else { return nil }
            return utc(year: year, month: month, day: day, hour: hour, minute: minute, second: second, fraction: 0, offset: 0)
        }
        return result ?? nil
    }

    /// Parses an RFC 3339 date-time, with optional fraction and offset.
    package static func rfc3339(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19) else { return nil }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == 0x2E {
            var scale = 0.1
            index += 1
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
        }
        var offset = 0
        if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D, index + 6 <= bytes.count,
           let hours = number((index + 1)..<(index + 3)), let minutes = number((index + 4)..<(index + 6)) {
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == 0x2D ? -1 : 1)
        }
        return utc(year: year, month: month, day: day, hour: hour, minute: minute, second: second, fraction: fraction, offset: offset)
    }

    /// Days-from-civil (Howard Hinnant), so no calendar object is needed.
    private static func utc(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, fraction: Double, offset: Int) -> Date? {
        // A hostile year (or offset) must not overflow the day arithmetic below.
        guard (0...9999).contains(year), (1...12).contains(month), (1...31).contains(day), (0..<25).contains(hour),
              (0..<60).contains(minute), (0..<61).contains(second), abs(offset) < 100_000 else { return nil }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Formats an HTTP date, for headers.
    package static func httpString(_ date: Date) -> String {
        date.formatted(Date.VerbatimFormatStyle(format: "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT", locale: Locale(identifier: "en_US_POSIX"), timeZone: .gmt, calendar: Calendar(identifier: .gregorian)))
    }
}
