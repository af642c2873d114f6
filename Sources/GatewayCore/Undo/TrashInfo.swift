public import Foundation

/// The record a trash keeps beside each trashed item: a FreeDesktop `.trashinfo` file
/// (FreeDesktop.org Trash specification 1.0), so desktop tools (`trash-list`, `gio trash`) and the
/// gateway read each other's trash.
///
/// ```
/// [Trash Info]
/// Path=/home/ann/report%20final.pdf
/// DeletionDate=2026-11-24T15:30:00
/// ```
///
/// `Path` is percent-encoded as trash-cli writes it (every byte but `A-Z a-z 0-9 - . _ ~ /`); it is
/// absolute, or relative to the volume's top folder in a `$topdir/.Trash-$uid` trash.
/// `DeletionDate` is local time without a zone, as the specification asks.
public struct TrashInfo: Sendable, Hashable {
    /// The original path as stored (decoded): absolute, or relative to the trash's top folder.
    public var path: String
    /// When the item was trashed; `nil` when the file gave no readable date.
    public var deletionDate: Date?

    /// Creates a record.
    public init(path: String, deletionDate: Date?) {
        self.path = path
        self.deletionDate = deletionDate
    }

    /// The largest `.trashinfo` file read; longer ones are refused as malformed.
    public static let maximumSize = 64 * 1024

    /// The file's bytes.
    public func encoded(timeZone: TimeZone = .current) -> Data {
        var text = "[Trash Info]\nPath=\(Self.percentEncoded(path))\n"
        if let deletionDate { text += "DeletionDate=\(Self.format(deletionDate, timeZone: timeZone))\n" }
        return Data(text.utf8)
    }

    /// Reads a `.trashinfo` file.
    ///
    /// - Throws: ``FileProviderError/malformedResponse(path:detail:)`` (with `name` as the path) for a
    ///   file over ``maximumSize``, without the `[Trash Info]` group or its `Path` key, or whose path
    ///   is not valid percent-encoded UTF-8. An unreadable `DeletionDate` gives a `nil` date instead.
    public static func parse(_ data: Data, name: String = "", timeZone: TimeZone = .current) throws -> TrashInfo {
        func malformed(_ detail: String) -> FileProviderError {
            .malformedResponse(path: name, detail: "trash info: \(detail)")
        }
        guard data.count <= maximumSize else { throw malformed("larger than \(maximumSize) bytes") }
        var inGroup = false
        var sawGroup = false
        var path: String?
        var date: Date?
        for rawLine in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            var line = Substring(decoding: rawLine, as: UTF8.self)
            if line.hasSuffix("\r") { line = line.dropLast() }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                inGroup = line == "[Trash Info]"
                if inGroup { sawGroup = true }
                continue
            }
            guard inGroup, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = String(line[line.index(after: equals)...])
            switch key {
            case "Path" where path == nil:
                guard let decoded = percentDecoded(value), !decoded.isEmpty else { throw malformed("Path is not valid percent-encoded UTF-8") }
                path = decoded
            case "DeletionDate" where date == nil:
                date = parseDate(value.trimmingCharacters(in: .whitespaces), timeZone: timeZone)
            default:
                continue
            }
        }
        guard sawGroup else { throw malformed("no [Trash Info] group") }
        guard let path else { throw malformed("no Path key") }
        return TrashInfo(path: path, deletionDate: date)
    }

    // MARK: Encoding

    /// Percent-encodes every byte but the unreserved ones and `/` (Python's `quote(path, "/")`).
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "%")))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0x0F)]))
            }
        }
        return out
    }

    /// Decodes `%XX` escapes; `nil` for a broken escape, a NUL byte or bytes that are not UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        HexEscapes.decode(Substring(text), allowsNUL: false)
    }

    // MARK: Dates

    /// `YYYY-MM-DDThh:mm:ss` in `timeZone`.
    static func format(_ date: Date, timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { let v = value ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        let year = parts.year ?? 1970
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(yearText)-\(two(parts.month))-\(two(parts.day))T\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
    }

    /// Reads `YYYY-MM-DDThh:mm:ss` (fraction and a `Z` or `±hh:mm` zone tolerated) in `timeZone`.
    static func parseDate(_ text: String, timeZone: TimeZone) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19, bytes.count <= 40 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: " "),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              year >= 1, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var zone = timeZone
        var rest = bytes[19...]
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst().drop { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        }
        if rest.first == UInt8(ascii: "Z") {
            zone = TimeZone(secondsFromGMT: 0) ?? timeZone
            rest = rest.dropFirst()
        } else if let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            let digits = rest.dropFirst().filter { $0 != UInt8(ascii: ":") }
            guard digits.count == 4, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            let values = digits.map { Int($0 - UInt8(ascii: "0")) }
            let seconds = (values[0] * 10 + values[1]) * 3600 + (values[2] * 10 + values[3]) * 60
            guard let fixed = TimeZone(secondsFromGMT: sign == UInt8(ascii: "+") ? seconds : -seconds) else { return nil }
            zone = fixed
            rest = rest[rest.endIndex...]
        }
        guard rest.isEmpty else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: min(second, 59)))
    }
}
