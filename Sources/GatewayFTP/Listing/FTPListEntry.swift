public import Foundation
public import GatewayCore

/// One entry of an FTP directory listing as the server described it, from one `LIST` line
/// (``LISTParser``) or one `MLSD` line (``MLSDParser``).
///
/// The values are what the server said, nothing more: fields the listing did not carry are `nil`
/// (a DOS-style `LIST` has no permissions, an `MLSD` line without `size` has no size). Dates are
/// absolute instants; the parsers read every listed time as UTC, which is what `MLSD` promises and
/// what most servers use for `LIST` too.
public struct FTPListEntry: Sendable, Hashable {
    /// The entry's name as listed: no folder part, and for a `LIST` symlink no ` -> target` part,
    /// e.g. `"report 2026.pdf"` or `"  leading spaces"`.
    public var name: String
    /// File, folder, symbolic link, or ``FileObjectType/other`` for devices, FIFOs, sockets and
    /// unknown `MLSD` types.
    public var type: FileObjectType
    /// Size in bytes when listed. `nil` for device files (the listing shows major/minor numbers
    /// instead) and for `MLSD` lines without a `size` fact. For a `LIST` symlink this is the size
    /// the server listed, usually the length of the target path.
    public var size: Int64?
    /// Last modification time, read as UTC. For a `LIST` line with only month, day and time, the year
    /// is inferred (see ``LISTParser/parse(_:now:)``).
    public var modificationDate: Date?
    /// Where a symbolic link points, when the listing says: `LIST`'s `name -> target`, or `MLSD`'s
    /// `type=OS.unix=slink:/target`. `nil` otherwise.
    public var symlinkTarget: String?
    /// The permissions as listed: for `LIST` the nine mode characters after the type character
    /// (e.g. `"rwxr-xr-x"`, ACL/xattr markers removed), for `MLSD` the raw `perm` fact (e.g. `"adfrw"`).
    public var permissions: String?
    /// The `MLSD` `unique` fact (an opaque id of the underlying file, equal for hard links), if listed.
    public var unique: String?
    /// `true` when the listing says the logged-in user cannot write the entry: for `MLSD` a `perm`
    /// fact without `w` (files, links, others) or without both `c` and `m` (folders); for `LIST` an
    /// owner without write permission (`r-x...`). `false` when the listing does not say.
    public var isReadOnly: Bool

    /// Creates an entry; only the name is required.
    public init(
        name: String,
        type: FileObjectType = .file,
        size: Int64? = nil,
        modificationDate: Date? = nil,
        symlinkTarget: String? = nil,
        permissions: String? = nil,
        unique: String? = nil,
        isReadOnly: Bool = false
    ) {
        self.name = name
        self.type = type
        self.size = size
        self.modificationDate = modificationDate
        self.symlinkTarget = symlinkTarget
        self.permissions = permissions
        self.unique = unique
        self.isReadOnly = isReadOnly
    }
}

/// A listing line that could not be understood: the parsers throw it instead of dropping the line
/// or guessing.
public struct FTPListParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The offending line, cut to its first ``maximumLineLength`` characters.
    public var line: String
    /// Why the line was rejected, e.g. `"the size is not a number"`.
    public var reason: String

    /// How many characters of the line an error keeps.
    public static let maximumLineLength = 200

    /// Creates an error for `line` (cut to ``maximumLineLength`` characters) with a human reason.
    public init(line: String, reason: String) {
        self.line = line.count > Self.maximumLineLength ? String(line.prefix(Self.maximumLineLength)) : line
        self.reason = reason
    }

    /// `unparseable listing line "<line>": <reason>`.
    public var description: String {
        "unparseable listing line \"\(line)\": \(reason)"
    }
}

// MARK: - Shared helpers of the listing parsers

/// Byte-level helpers shared by ``LISTParser`` and ``MLSDParser``: they work on a line's UTF-8
/// bytes, never on `Character`s, and never use regular expressions.
enum FTPListingBytes {
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let carriageReturn: UInt8 = 0x0D
    static let lineFeed: UInt8 = 0x0A
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let equals: UInt8 = 0x3D
    static let dot: UInt8 = 0x2E
    static let comma: UInt8 = 0x2C
    static let dash: UInt8 = 0x2D
    static let slash: UInt8 = 0x2F
    static let plus: UInt8 = 0x2B

    /// Space or tab.
    @inline(__always)
    static func isBlank(_ byte: UInt8) -> Bool {
        byte == space || byte == tab
    }

    /// `0`...`9`.
    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= zero && byte <= nine
    }

    /// ASCII lower-casing; other bytes unchanged.
    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// The line's bytes and the end index with trailing CR and LF removed.
    static func bytes(of line: String) -> (bytes: [UInt8], end: Int) {
        let bytes = Array(line.utf8)
        var end = bytes.count
        while end > 0, bytes[end - 1] == carriageReturn || bytes[end - 1] == lineFeed {
            end -= 1
        }
        return (bytes, end)
    }

    /// The bytes in `range` decoded as UTF-8 (the ranges the parsers cut at ASCII bytes, so a valid
    /// line stays valid; anything else would be repaired with U+FFFD, never trap).
    static func string(_ bytes: [UInt8], _ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// The value of a run of 1...`maxDigits` ASCII digits filling `range` exactly, or `nil`.
    static func number(_ bytes: [UInt8], _ range: Range<Int>, maxDigits: Int = 18) -> Int? {
        guard !range.isEmpty, range.count <= maxDigits else { return nil }
        var value = 0
        for index in range {
            let byte = bytes[index]
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - zero)
        }
        return value
    }

    /// A non-negative 64-bit size spelled with ASCII digits filling `range`, or `nil` (empty, a sign,
    /// another character, or more than `Int64.max`). Leading zeros are decimal, never octal.
    static func size(_ bytes: [UInt8], _ range: Range<Int>, allowingCommas: Bool = false) -> Int64? {
        guard !range.isEmpty else { return nil }
        var value: Int64 = 0
        var sawDigit = false
        for index in range {
            let byte = bytes[index]
            if allowingCommas, byte == comma, sawDigit { continue }
            guard isDigit(byte) else { return nil }
            sawDigit = true
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - zero))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return sawDigit ? value : nil
    }

    /// `true` when the bytes in `range` equal the lower-case ASCII `literal` ignoring ASCII case.
    static func equalsIgnoringCase(_ bytes: [UInt8], _ range: Range<Int>, _ literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        return literal.withUTF8Buffer { expected in
            var offset = 0
            for index in range {
                guard lower(bytes[index]) == expected[offset] else { return false }
                offset += 1
            }
            return true
        }
    }

    /// `true` when the bytes in `range` start with the lower-case ASCII `literal` ignoring ASCII case.
    static func hasPrefixIgnoringCase(_ bytes: [UInt8], _ range: Range<Int>, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard range.count >= count else { return false }
        return equalsIgnoringCase(bytes, range.lowerBound..<(range.lowerBound + count), literal)
    }

    /// The ranges of the first `limit` blank-separated tokens of `bytes[start..<end]`.
    static func tokens(_ bytes: [UInt8], from start: Int, to end: Int, limit: Int) -> [Range<Int>] {
        var result: [Range<Int>] = []
        result.reserveCapacity(limit)
        var index = start
        while index < end, result.count < limit {
            while index < end, isBlank(bytes[index]) { index += 1 }
            if index >= end { break }
            let tokenStart = index
            while index < end, !isBlank(bytes[index]) { index += 1 }
            result.append(tokenStart..<index)
        }
        return result
    }
}

/// Proleptic Gregorian calendar arithmetic in UTC (days-from-civil), thread-safe and allocation-free;
/// used instead of `DateFormatter`/`Calendar` so that large listings parse quickly on any thread.
enum FTPListingCalendar {
    /// Leap year in the Gregorian calendar.
    static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// Days in `month` (1...12) of `year`.
    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// The largest day `month` (1...12) can have in any year (29 for February).
    static func maximumDay(ofMonth month: Int) -> Int {
        month == 2 ? 29 : daysInMonth(month, year: 2000)
    }

    /// `true` for an existing calendar day.
    static func isValid(year: Int, month: Int, day: Int) -> Bool {
        (1...12).contains(month) && day >= 1 && day <= daysInMonth(month, year: year)
    }

    /// Days since 1970-01-01 of a civil date (Howard Hinnant's `days_from_civil`).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func civilDate(daysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// Seconds since 1970-01-01 00:00:00 UTC of a UTC civil time (a second of 60 rolls over).
    static func secondsSinceEpoch(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int {
        daysSinceEpoch(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second
    }

    /// The UTC calendar year `date` falls in (1970 for a non-finite date).
    static func year(of date: Date) -> Int {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, abs(seconds) < 1e15 else { return 1970 }
        let days = Int((seconds / 86_400).rounded(.down))
        return civilDate(daysSinceEpoch: days).year
    }
}
