public import Foundation
import GatewayCore

/// Parses one line of a `LIST` listing, whose format RFC 959 leaves to the server.
///
/// Two families are understood; anything else throws ``FTPListParseError`` (a line is never dropped
/// silently):
///
/// - **Unix `ls -l`** (vsftpd, ProFTPD, Pure-FTPd, FileZilla Server, Serv-U, busybox, NAS boxes, IIS in
///   Unix mode): `mode links owner group size date name`. The mode may carry an ACL/xattr/SELinux
///   marker (`-rw-r--r--+`, `drwxr-xr-x@`, `-rw-r--r--.`) and `s`/`S`/`t`/`T` bits; the link count,
///   group or owner may be missing and owners/groups may be numeric; device files list
///   `major, minor` (or `major,minor`) instead of a size. The date is `Mon dd HH:MM` (year inferred),
///   `Mon dd yyyy`, BSD `ls -lT`'s `Mon dd HH:MM:SS yyyy`, or ISO `yyyy-mm-dd HH:MM[:SS[.fff]]`
///   optionally followed by a `±hhmm` offset. Month names are English and case-insensitive.
///   The name is everything after the date and exactly one blank, so leading and repeated spaces
///   in names survive; a symlink's ` -> target` is split off into ``FTPListEntry/symlinkTarget``.
/// - **DOS/IIS**: `MM-DD-YY  hh:mmAM  <DIR>  name` or `... size name`, with 2- or 4-digit years
///   (2-digit years below 70 are 20xx, others 19xx), `AM`/`PM` or 24-hour times, and `YYYY-MM-DD`
///   dates. A size is followed by exactly one blank before the name; after `<DIR>` (IIS pads to a
///   column) all blanks are skipped. `<JUNCTION>`/`<SYMLINKD>`/`<SYMLINK>` entries are links, with
///   a `[target]` suffix split off when present.
///
/// All times are read as UTC. The parser works on the line's UTF-8 bytes with a hand-written
/// tokenizer (no regular expressions, no `DateFormatter`), is safe to call from any thread and never
/// traps, whatever the input.
public enum LISTParser {
    /// Parses one `LIST` line.
    ///
    /// - Parameters:
    ///   - line: One line of the data connection's text, with or without its CR/LF.
    ///   - now: The current time, used only to infer the year of a Unix `Mon dd HH:MM` date: the
    ///     latest year that puts the date at most one day after `now` (the day of slack absorbs clock
    ///     and time-zone skew between client and server), read in UTC.
    /// - Returns: The entry, or `nil` for a line to skip: an empty or blank line, a `total N` line,
    ///   and the names `.` and `..`.
    /// - Throws: ``FTPListParseError`` for a line in no known format or with an invalid part
    ///   (a size that is not a number, a date that does not exist, no name after the date).
    public static func parse(_ line: String, now: Date) throws(FTPListParseError) -> FTPListEntry? {
        typealias B = FTPListingBytes
        let (bytes, end) = B.bytes(of: line)
        let tokens = B.tokens(bytes, from: 0, to: end, limit: maximumHeaderTokens)
        guard let first = tokens.first else { return nil }
        if tokens.count <= 2, B.equalsIgnoringCase(bytes, first, "total") { return nil }
        if let mode = unixMode(bytes, first) {
            return try parseUnix(bytes, end: end, tokens: tokens, mode: mode, now: now, line: line)
        }
        if B.isDigit(bytes[first.lowerBound]), let date = dosDate(bytes, first) {
            return try parseDOS(bytes, end: end, tokens: tokens, date: date, line: line)
        }
        throw FTPListParseError(
            line: line, reason: "not a Unix (ls -l) or DOS/IIS listing line"
        )
    }

    /// How many leading tokens the parser looks at to find the date (the name's tokens follow it).
    private static let maximumHeaderTokens = 16
    /// The last token index at which a Unix date may start (mode, links, owner and group with a few
    /// spaces, major/minor or size come before it).
    private static let maximumDateToken = 11

    // MARK: - Unix

    /// A Unix mode token: its type and the range of its nine permission characters.
    private struct UnixMode {
        var type: FileObjectType
        var permissions: Range<Int>
    }

    /// A date found among a Unix line's tokens.
    private struct UnixDate {
        /// `nil` when the line only has month, day and time.
        var year: Int?
        var month: Int
        var day: Int
        var hour: Int
        var minute: Int
        var second: Int
        var fraction: Double
        /// Seconds east of UTC from an ISO `±hhmm` token.
        var offset: Int
        /// The index of the date's first token (the size comes right before it).
        var firstToken: Int
        /// The index of the date's last token (the name comes right after it).
        var lastToken: Int
    }

    /// The mode token `[type char][9 permission chars][optional marker]`, or `nil`.
    private static func unixMode(_ bytes: [UInt8], _ token: Range<Int>) -> UnixMode? {
        typealias B = FTPListingBytes
        guard token.count == 10 || token.count == 11 else { return nil }
        let start = token.lowerBound
        let typeChar = bytes[start]
        let isLetter = (B.lower(typeChar) >= 0x61 && B.lower(typeChar) <= 0x7A)
        guard typeChar == B.dash || isLetter else { return nil }
        for index in (start + 1)..<(start + 10) {
            switch bytes[index] {
            case UInt8(ascii: "r"), UInt8(ascii: "w"), UInt8(ascii: "x"), UInt8(ascii: "-"),
                UInt8(ascii: "s"), UInt8(ascii: "S"), UInt8(ascii: "t"), UInt8(ascii: "T"),
                UInt8(ascii: "l"), UInt8(ascii: "L"), UInt8(ascii: "?"):
                continue
            default:
                return nil
            }
        }
        if token.count == 11 {
            switch bytes[start + 10] {
            case UInt8(ascii: "+"), UInt8(ascii: "@"), UInt8(ascii: "."), UInt8(ascii: "*"):
                break
            default:
                return nil
            }
        }
        let type: FileObjectType
        switch typeChar {
        case UInt8(ascii: "d"): type = .directory
        case UInt8(ascii: "-"): type = .file
        case UInt8(ascii: "l"): type = .symbolicLink
        default: type = .other
        }
        return UnixMode(type: type, permissions: (start + 1)..<(start + 10))
    }

    private static func parseUnix(
        _ bytes: [UInt8], end: Int, tokens: [Range<Int>], mode: UnixMode, now: Date, line: String
    ) throws(FTPListParseError) -> FTPListEntry? {
        typealias B = FTPListingBytes

        // The date: the first place (after mode, links/owner and size) where one fits. Index 2
        // (mode, size, date: no links, owner or group) is tried last, because there an owner called
        // "may" or "jan" followed by a numeric group and size could pass for a date.
        var found: UnixDate?
        var index = 3
        while index <= maximumDateToken, index < tokens.count {
            if let date = unixDate(bytes, tokens, at: index) {
                found = date
                break
            }
            index += 1
        }
        if found == nil, tokens.count > 2 {
            found = unixDate(bytes, tokens, at: 2)
        }
        guard let date = found else {
            throw FTPListParseError(
                line: line,
                reason: "no date found (expected 'Mon dd HH:MM', 'Mon dd yyyy' or 'yyyy-mm-dd HH:MM' after the size)"
            )
        }

        // The size, or a device's "major, minor" / "major,minor".
        let sizeToken = tokens[date.firstToken - 1]
        var size: Int64?
        if let commaIndex = sizeToken.firstIndex(where: { bytes[$0] == B.comma }) {
            let major = sizeToken.lowerBound..<commaIndex
            let minor = (commaIndex + 1)..<sizeToken.upperBound
            guard B.size(bytes, major) != nil, B.size(bytes, minor) != nil else {
                throw FTPListParseError(
                    line: line, reason: "size \"\(B.string(bytes, sizeToken))\" is not a number"
                )
            }
        } else if let value = B.size(bytes, sizeToken) {
            // "major, minor": the minor number looks like a size, the token before ends with a comma.
            let majorIndex = date.firstToken - 2
            let isDevice = majorIndex >= 1 && isDeviceMajor(bytes, tokens[majorIndex])
            size = isDevice ? nil : value
        } else {
            throw FTPListParseError(
                line: line, reason: "size \"\(B.string(bytes, sizeToken))\" is not a number"
            )
        }

        // The time.
        let year: Int
        if let listedYear = date.year {
            guard FTPListingCalendar.isValid(year: listedYear, month: date.month, day: date.day) else {
                throw FTPListParseError(line: line, reason: "the date does not exist")
            }
            year = listedYear
        } else {
            guard date.day <= FTPListingCalendar.maximumDay(ofMonth: date.month) else {
                throw FTPListParseError(line: line, reason: "the date does not exist")
            }
            guard let inferred = inferYear(month: date.month, day: date.day, hour: date.hour, minute: date.minute, now: now)
            else {
                throw FTPListParseError(line: line, reason: "no year fits the date")
            }
            year = inferred
        }
        let seconds = FTPListingCalendar.secondsSinceEpoch(
            year: year, month: date.month, day: date.day, hour: date.hour, minute: date.minute, second: date.second
        ) - date.offset
        let modificationDate = Date(timeIntervalSince1970: Double(seconds) + date.fraction)

        // The name: after the date's last token and exactly one blank.
        let nameStart = tokens[date.lastToken].upperBound + 1
        guard nameStart < end else {
            throw FTPListParseError(line: line, reason: "no name after the date")
        }
        var nameEnd = end
        var symlinkTarget: String?
        if mode.type == .symbolicLink, let arrow = arrowIndex(bytes, from: nameStart + 1, to: end) {
            nameEnd = arrow
            symlinkTarget = B.string(bytes, (arrow + 4)..<end)
        }
        let nameRange = nameStart..<nameEnd
        if isDotOrDotDot(bytes, nameRange) { return nil }

        let ownerWrite = bytes[mode.permissions.lowerBound + 1]
        return FTPListEntry(
            name: B.string(bytes, nameRange),
            type: mode.type,
            size: size,
            modificationDate: modificationDate,
            symlinkTarget: symlinkTarget,
            permissions: B.string(bytes, mode.permissions),
            isReadOnly: ownerWrite != UInt8(ascii: "w")
        )
    }

    /// A date starting at token `index`: `Mon dd HH:MM`, `Mon dd yyyy`, `Mon dd HH:MM:SS yyyy` or
    /// `yyyy-mm-dd HH:MM[:SS[.fff]] [±hhmm]`; `nil` when none fits there.
    private static func unixDate(_ bytes: [UInt8], _ tokens: [Range<Int>], at index: Int) -> UnixDate? {
        typealias B = FTPListingBytes
        guard index >= 1, index + 1 < tokens.count else { return nil }
        let token = tokens[index]

        if let month = monthNumber(bytes, token) {
            guard index + 2 < tokens.count,
                  let day = B.number(bytes, tokens[index + 1], maxDigits: 2), day >= 1, day <= 31
            else { return nil }
            let third = tokens[index + 2]
            if let time = clockTime(bytes, third), !time.hasSeconds {
                return UnixDate(
                    year: nil, month: month, day: day, hour: time.hour, minute: time.minute, second: 0,
                    fraction: 0, offset: 0, firstToken: index, lastToken: index + 2
                )
            }
            if third.count == 4, let year = B.number(bytes, third, maxDigits: 4) {
                return UnixDate(
                    year: year, month: month, day: day, hour: 0, minute: 0, second: 0,
                    fraction: 0, offset: 0, firstToken: index, lastToken: index + 2
                )
            }
            if let time = clockTime(bytes, third), time.hasSeconds, index + 3 < tokens.count,
               tokens[index + 3].count == 4, let year = B.number(bytes, tokens[index + 3], maxDigits: 4) {
                return UnixDate(
                    year: year, month: month, day: day, hour: time.hour, minute: time.minute,
                    second: time.second, fraction: time.fraction, offset: 0,
                    firstToken: index, lastToken: index + 3
                )
            }
            return nil
        }

        if let date = isoDate(bytes, token), let time = clockTime(bytes, tokens[index + 1]) {
            var lastToken = index + 1
            var offset = 0
            if time.hasSeconds, index + 2 < tokens.count, let zone = zoneOffset(bytes, tokens[index + 2]) {
                offset = zone
                lastToken = index + 2
            }
            return UnixDate(
                year: date.year, month: date.month, day: date.day, hour: time.hour, minute: time.minute,
                second: time.second, fraction: time.fraction, offset: offset,
                firstToken: index, lastToken: lastToken
            )
        }
        return nil
    }

    /// Lower-case English month abbreviations, three bytes each.
    private static let monthNames: [UInt8] = Array("janfebmaraprmayjunjulaugsepoctnovdec".utf8)

    /// 1...12 for a three-letter English month name in any case, else `nil`.
    private static func monthNumber(_ bytes: [UInt8], _ token: Range<Int>) -> Int? {
        typealias B = FTPListingBytes
        guard token.count == 3 else { return nil }
        let first = B.lower(bytes[token.lowerBound])
        let second = B.lower(bytes[token.lowerBound + 1])
        let third = B.lower(bytes[token.lowerBound + 2])
        var offset = 0
        while offset < monthNames.count {
            if monthNames[offset] == first, monthNames[offset + 1] == second, monthNames[offset + 2] == third {
                return offset / 3 + 1
            }
            offset += 3
        }
        return nil
    }

    /// A time of day `H:MM`, `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fff` filling the token.
    private static func clockTime(
        _ bytes: [UInt8], _ token: Range<Int>
    ) -> (hour: Int, minute: Int, second: Int, fraction: Double, hasSeconds: Bool)? {
        typealias B = FTPListingBytes
        var index = token.lowerBound
        let end = token.upperBound
        let hourStart = index
        while index < end, B.isDigit(bytes[index]), index - hourStart < 3 { index += 1 }
        guard let hour = B.number(bytes, hourStart..<index, maxDigits: 2), hour <= 23,
              index < end, bytes[index] == B.colon,
              index + 3 <= end, let minute = B.number(bytes, (index + 1)..<(index + 3)), minute <= 59
        else { return nil }
        index += 3
        if index == end {
            return (hour, minute, 0, 0, false)
        }
        guard bytes[index] == B.colon, index + 3 <= end,
              let second = B.number(bytes, (index + 1)..<(index + 3)), second <= 60
        else { return nil }
        index += 3
        if index == end {
            return (hour, minute, second, 0, true)
        }
        guard bytes[index] == B.dot, index + 1 < end else { return nil }
        var numerator = 0
        var denominator = 1
        for digitIndex in (index + 1)..<end {
            guard B.isDigit(bytes[digitIndex]) else { return nil }
            if denominator < 1_000_000_000 {
                numerator = numerator * 10 + Int(bytes[digitIndex] - B.zero)
                denominator *= 10
            }
        }
        return (hour, minute, second, Double(numerator) / Double(denominator), true)
    }

    /// `yyyy-mm-dd` filling the token (month and day ranges checked, not the day's existence).
    private static func isoDate(_ bytes: [UInt8], _ token: Range<Int>) -> (year: Int, month: Int, day: Int)? {
        typealias B = FTPListingBytes
        guard token.count == 10 else { return nil }
        let start = token.lowerBound
        guard bytes[start + 4] == B.dash, bytes[start + 7] == B.dash,
              let year = B.number(bytes, start..<(start + 4)),
              let month = B.number(bytes, (start + 5)..<(start + 7)), (1...12).contains(month),
              let day = B.number(bytes, (start + 8)..<(start + 10)), (1...31).contains(day)
        else { return nil }
        return (year, month, day)
    }

    /// Seconds east of UTC for a `+hhmm`/`-hhmm` token, else `nil`.
    private static func zoneOffset(_ bytes: [UInt8], _ token: Range<Int>) -> Int? {
        typealias B = FTPListingBytes
        guard token.count == 5 else { return nil }
        let sign = bytes[token.lowerBound]
        guard sign == B.plus || sign == B.dash,
              let hours = B.number(bytes, (token.lowerBound + 1)..<(token.lowerBound + 3)), hours <= 23,
              let minutes = B.number(bytes, (token.lowerBound + 3)..<(token.lowerBound + 5)), minutes <= 59
        else { return nil }
        let offset = hours * 3_600 + minutes * 60
        return sign == B.plus ? offset : -offset
    }

    /// `true` for a device's `major,` token (digits and a trailing comma).
    private static func isDeviceMajor(_ bytes: [UInt8], _ token: Range<Int>) -> Bool {
        typealias B = FTPListingBytes
        guard token.count >= 2, bytes[token.upperBound - 1] == B.comma else { return false }
        return B.size(bytes, token.lowerBound..<(token.upperBound - 1)) != nil
    }

    /// The latest year, from the year after `now`'s downwards, that makes month/day/time a real date
    /// no more than one day after `now` (UTC); `nil` if none of the next ten years back fits.
    private static func inferYear(month: Int, day: Int, hour: Int, minute: Int, now: Date) -> Int? {
        let limit = now.timeIntervalSince1970 + 86_400
        let nowYear = FTPListingCalendar.year(of: now)
        var year = nowYear + 1
        while year >= nowYear - 9 {
            if FTPListingCalendar.isValid(year: year, month: month, day: day) {
                let seconds = FTPListingCalendar.secondsSinceEpoch(
                    year: year, month: month, day: day, hour: hour, minute: minute, second: 0
                )
                if !(Double(seconds) > limit) { return year }
            }
            year -= 1
        }
        return nil
    }

    /// The index of the first `" -> "` in `bytes[start..<end]`, or `nil`.
    private static func arrowIndex(_ bytes: [UInt8], from start: Int, to end: Int) -> Int? {
        var index = start
        while index + 4 <= end {
            if bytes[index] == 0x20, bytes[index + 1] == 0x2D, bytes[index + 2] == 0x3E, bytes[index + 3] == 0x20 {
                return index
            }
            index += 1
        }
        return nil
    }

    /// `true` for the names `.` and `..`.
    private static func isDotOrDotDot(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        let dot = FTPListingBytes.dot
        switch range.count {
        case 1: return bytes[range.lowerBound] == dot
        case 2: return bytes[range.lowerBound] == dot && bytes[range.lowerBound + 1] == dot
        default: return false
        }
    }

    // MARK: - DOS / IIS

    /// The date of a DOS line's first token: `MM-DD-YY`, `MM-DD-YYYY` or `YYYY-MM-DD` (`-` or `/`),
    /// ranges checked; its existence is checked later.
    private static func dosDate(_ bytes: [UInt8], _ token: Range<Int>) -> (year: Int, month: Int, day: Int)? {
        typealias B = FTPListingBytes
        var foundFirst: Int?
        var foundSecond: Int?
        for index in token where bytes[index] == B.dash || bytes[index] == B.slash {
            if foundFirst == nil {
                foundFirst = index
            } else if foundSecond == nil {
                foundSecond = index
            } else {
                return nil
            }
        }
        guard let firstSeparator = foundFirst, let secondSeparator = foundSecond,
              bytes[firstSeparator] == bytes[secondSeparator]
        else {
            return nil
        }
        let first = token.lowerBound..<firstSeparator
        let second = (firstSeparator + 1)..<secondSeparator
        let third = (secondSeparator + 1)..<token.upperBound
        guard let a = B.number(bytes, first, maxDigits: 4),
              let b = B.number(bytes, second, maxDigits: 2),
              let c = B.number(bytes, third, maxDigits: 4)
        else { return nil }
        let year: Int
        let month: Int
        let day: Int
        if first.count == 4 {
            guard third.count <= 2 else { return nil }
            year = a
            month = b
            day = c
        } else {
            guard first.count <= 2, third.count == 2 || third.count == 4 else { return nil }
            month = a
            day = b
            year = third.count == 4 ? c : (c < 70 ? 2000 + c : 1900 + c)
        }
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        return (year, month, day)
    }

    /// A DOS time `hh:mm` with an optional `AM`/`PM` suffix: hour, minute and 0 (none), 1 (AM) or 2 (PM).
    private static func dosTime(_ bytes: [UInt8], _ token: Range<Int>) -> (hour: Int, minute: Int, meridiem: Int)? {
        typealias B = FTPListingBytes
        var clockEnd = token.upperBound
        var meridiem = 0
        if token.count >= 2 {
            let suffix = (token.upperBound - 2)..<token.upperBound
            if B.equalsIgnoringCase(bytes, suffix, "am") {
                meridiem = 1
                clockEnd -= 2
            } else if B.equalsIgnoringCase(bytes, suffix, "pm") {
                meridiem = 2
                clockEnd -= 2
            }
        }
        guard let time = clockTime(bytes, token.lowerBound..<clockEnd), !time.hasSeconds else { return nil }
        return (time.hour, time.minute, meridiem)
    }

    private static func parseDOS(
        _ bytes: [UInt8], end: Int, tokens: [Range<Int>], date: (year: Int, month: Int, day: Int), line: String
    ) throws(FTPListParseError) -> FTPListEntry? {
        typealias B = FTPListingBytes
        guard tokens.count >= 3, var time = dosTime(bytes, tokens[1]) else {
            throw FTPListParseError(line: line, reason: "not a Unix (ls -l) or DOS/IIS listing line")
        }
        var next = 2
        if time.meridiem == 0 {
            if B.equalsIgnoringCase(bytes, tokens[2], "am") {
                time.meridiem = 1
                next = 3
            } else if B.equalsIgnoringCase(bytes, tokens[2], "pm") {
                time.meridiem = 2
                next = 3
            }
        }
        var hour = time.hour
        if time.meridiem != 0 {
            guard (1...12).contains(hour) else {
                throw FTPListParseError(line: line, reason: "the hour of a 12-hour time is not 1...12")
            }
            hour = hour % 12 + (time.meridiem == 2 ? 12 : 0)
        }
        guard FTPListingCalendar.isValid(year: date.year, month: date.month, day: date.day) else {
            throw FTPListParseError(line: line, reason: "the date does not exist")
        }
        guard next < tokens.count else {
            throw FTPListParseError(line: line, reason: "no <DIR> or size after the time")
        }

        let kindToken = tokens[next]
        var type = FileObjectType.file
        var size: Int64?
        var nameStart: Int
        if B.equalsIgnoringCase(bytes, kindToken, "<dir>") {
            type = .directory
        } else if B.equalsIgnoringCase(bytes, kindToken, "<junction>")
            || B.equalsIgnoringCase(bytes, kindToken, "<symlinkd>")
            || B.equalsIgnoringCase(bytes, kindToken, "<symlink>") {
            type = .symbolicLink
        } else if let value = B.size(bytes, kindToken, allowingCommas: true) {
            size = value
        } else {
            throw FTPListParseError(
                line: line, reason: "\"\(B.string(bytes, kindToken))\" is neither <DIR> nor a size"
            )
        }
        if type == .file {
            nameStart = kindToken.upperBound + 1
        } else {
            nameStart = kindToken.upperBound
            while nameStart < end, B.isBlank(bytes[nameStart]) { nameStart += 1 }
        }
        guard nameStart < end else {
            throw FTPListParseError(line: line, reason: "no name after the size")
        }

        var nameEnd = end
        var symlinkTarget: String?
        if type == .symbolicLink, bytes[end - 1] == UInt8(ascii: "]") {
            // `name [target]`: split at the last " [".
            var index = end - 2
            while index > nameStart {
                if bytes[index] == UInt8(ascii: "["), bytes[index - 1] == B.space {
                    nameEnd = index - 1
                    symlinkTarget = B.string(bytes, (index + 1)..<(end - 1))
                    break
                }
                index -= 1
            }
        }
        let nameRange = nameStart..<nameEnd
        if isDotOrDotDot(bytes, nameRange) { return nil }

        let seconds = FTPListingCalendar.secondsSinceEpoch(
            year: date.year, month: date.month, day: date.day, hour: hour, minute: time.minute, second: 0
        )
        return FTPListEntry(
            name: B.string(bytes, nameRange),
            type: type,
            size: size,
            modificationDate: Date(timeIntervalSince1970: Double(seconds)),
            symlinkTarget: symlinkTarget
        )
    }
}
