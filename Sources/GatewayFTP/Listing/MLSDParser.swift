import Foundation
import GatewayCore

/// Parses one line of an `MLSD` listing (RFC 3659 §7): `fact=value;fact=value; name`.
///
/// The facts end with `;`, then exactly one space, then the name, which is taken verbatim to the end
/// of the line (spaces, semicolons, `=` and further leading spaces included; only a trailing CR/LF is
/// removed). Fact names are case-insensitive and unknown facts (`UNIX.mode`, `UNIX.owner`, `sizd`,
/// `create`, `lang`, ...) are ignored. Recognised facts:
///
/// - `type`: `file`, `dir`, `cdir`/`pdir` (the line is skipped), `OS.unix=symlink`, `OS.unix=slink`
///   and `OS.unix=slink:<target>` (a symbolic link), anything else (`OS.unix=chr-4/0`, `OS.unix=fifo`,
///   an unknown word) is ``FileObjectType/other``. Without a `type` fact the entry is a file.
/// - `size`: decimal digits only (leading zeros are decimal).
/// - `modify`: `YYYYMMDDHHMMSS` with an optional `.` and any number of fraction digits, in UTC.
/// - `perm` and `unique`: kept as they are (``FTPListEntry/permissions``, ``FTPListEntry/unique``).
///
/// Tolerances: a line that starts with a space has no facts (` name`), unless what follows the
/// space is itself a valid `facts; name` line, which is how an `MLST` reply on the control
/// connection shows it (` type=file;size=1; /dir/x`). A facts list whose last `;` is missing
/// (`type=file;size=1 name`) is accepted.
public enum MLSDParser {
    /// Parses one `MLSD` line.
    ///
    /// - Parameter line: One line of the data connection's text, with or without its CR/LF.
    /// - Returns: The entry, or `nil` for a line to skip: an empty or blank line, a `type=cdir` or
    ///   `type=pdir` line, and the names `.` and `..`.
    /// - Throws: ``FTPListParseError`` when there is no space between the facts and the name, the
    ///   name is empty, a fact has no `=`, `size` is not a non-negative decimal number or `modify`
    ///   is not a valid `YYYYMMDDHHMMSS[.fraction]` time.
    public static func parse(_ line: String) throws(FTPListParseError) -> FTPListEntry? {
        typealias B = FTPListingBytes
        let (bytes, end) = B.bytes(of: line)
        var firstNonBlank = 0
        while firstNonBlank < end, B.isBlank(bytes[firstNonBlank]) { firstNonBlank += 1 }
        if firstNonBlank == end { return nil }

        // Split into facts and name.
        let factsEnd: Int
        let nameStart: Int
        if bytes[0] == B.space {
            // No facts (RFC 3659 allows an empty fact list), or an MLST reply line's leading space.
            if let split = factsSplit(bytes, from: 1, to: end, requireSemicolon: true),
               validFacts(bytes, 1..<split.factsEnd) {
                return try interpret(bytes, facts: 1..<split.factsEnd, name: split.nameStart..<end, line: line)
            }
            factsEnd = 0
            nameStart = 1
        } else if let split = factsSplit(bytes, from: 0, to: end, requireSemicolon: false) {
            factsEnd = split.factsEnd
            nameStart = split.nameStart
        } else {
            throw FTPListParseError(line: line, reason: "no space between the facts and the name")
        }
        return try interpret(bytes, facts: 0..<factsEnd, name: nameStart..<end, line: line)
    }

    /// Where the facts end and the name starts in `bytes[start..<end]`: after the first `"; "`
    /// (fact values never contain `;`), or, without one and when `requireSemicolon` is `false`,
    /// after the first space when the text before it contains a `=`.
    private static func factsSplit(
        _ bytes: [UInt8], from start: Int, to end: Int, requireSemicolon: Bool
    ) -> (factsEnd: Int, nameStart: Int)? {
        typealias B = FTPListingBytes
        var index = start
        var firstSpace: Int?
        var sawEquals = false
        while index < end {
            let byte = bytes[index]
            if byte == B.semicolon, index + 1 < end, bytes[index + 1] == B.space {
                return (index + 1, index + 2)
            }
            if byte == B.space, firstSpace == nil {
                firstSpace = index
                if requireSemicolon { return nil }
            }
            if byte == B.equals, firstSpace == nil { sawEquals = true }
            index += 1
        }
        if !requireSemicolon, let space = firstSpace, sawEquals, space > start {
            return (space, space + 1)
        }
        return nil
    }

    /// `true` when every `;`-separated fact in `range` is a non-empty `name=value` whose name is
    /// made of letters, digits, `.`, `-` and `_` (used to recognise an `MLST` reply line).
    private static func validFacts(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        typealias B = FTPListingBytes
        var sawFact = false
        var index = range.lowerBound
        while index < range.upperBound {
            let factStart = index
            while index < range.upperBound, bytes[index] != B.semicolon { index += 1 }
            let fact = factStart..<index
            index += 1
            if fact.isEmpty { continue }
            var nameEnd = fact.lowerBound
            while nameEnd < fact.upperBound, bytes[nameEnd] != B.equals {
                let byte = B.lower(bytes[nameEnd])
                let allowed = (byte >= 0x61 && byte <= 0x7A) || B.isDigit(byte)
                    || byte == B.dot || byte == B.dash || byte == 0x5F
                guard allowed else { return false }
                nameEnd += 1
            }
            guard nameEnd > fact.lowerBound, nameEnd < fact.upperBound else { return false }
            sawFact = true
        }
        return sawFact
    }

    /// Reads the facts in `facts` and builds the entry named by `name`.
    private static func interpret(
        _ bytes: [UInt8], facts: Range<Int>, name: Range<Int>, line: String
    ) throws(FTPListParseError) -> FTPListEntry? {
        typealias B = FTPListingBytes
        var typeValue: Range<Int>?
        var sizeValue: Range<Int>?
        var modifyValue: Range<Int>?
        var permValue: Range<Int>?
        var uniqueValue: Range<Int>?

        var index = facts.lowerBound
        while index < facts.upperBound {
            let factStart = index
            while index < facts.upperBound, bytes[index] != B.semicolon { index += 1 }
            let fact = factStart..<index
            index += 1
            if fact.isEmpty { continue }
            var equals = fact.lowerBound
            while equals < fact.upperBound, bytes[equals] != B.equals { equals += 1 }
            guard equals < fact.upperBound else {
                throw FTPListParseError(
                    line: line, reason: "fact \"\(B.string(bytes, fact))\" has no '='"
                )
            }
            let factName = fact.lowerBound..<equals
            let value = (equals + 1)..<fact.upperBound
            if B.equalsIgnoringCase(bytes, factName, "type") {
                typeValue = value
            } else if B.equalsIgnoringCase(bytes, factName, "size") {
                sizeValue = value
            } else if B.equalsIgnoringCase(bytes, factName, "modify") {
                modifyValue = value
            } else if B.equalsIgnoringCase(bytes, factName, "perm") {
                permValue = value
            } else if B.equalsIgnoringCase(bytes, factName, "unique") {
                uniqueValue = value
            }
        }

        // Type first: `cdir`/`pdir` lines are skipped whatever their other facts say.
        var type = FileObjectType.file
        var symlinkTarget: String?
        if let value = typeValue {
            if B.equalsIgnoringCase(bytes, value, "file") {
                type = .file
            } else if B.equalsIgnoringCase(bytes, value, "dir") {
                type = .directory
            } else if B.equalsIgnoringCase(bytes, value, "cdir") || B.equalsIgnoringCase(bytes, value, "pdir") {
                return nil
            } else if B.equalsIgnoringCase(bytes, value, "os.unix=symlink")
                || B.equalsIgnoringCase(bytes, value, "os.unix=slink") {
                type = .symbolicLink
            } else if B.hasPrefixIgnoringCase(bytes, value, "os.unix=slink:") {
                type = .symbolicLink
                let target = (value.lowerBound + 14)..<value.upperBound
                symlinkTarget = target.isEmpty ? nil : B.string(bytes, target)
            } else {
                type = .other
            }
        }

        guard !name.isEmpty else {
            throw FTPListParseError(line: line, reason: "the name is empty")
        }
        if name.count == 1, bytes[name.lowerBound] == B.dot { return nil }
        if name.count == 2, bytes[name.lowerBound] == B.dot, bytes[name.lowerBound + 1] == B.dot { return nil }

        var size: Int64?
        if let value = sizeValue {
            guard let parsed = B.size(bytes, value) else {
                throw FTPListParseError(
                    line: line, reason: "size \"\(B.string(bytes, value))\" is not a non-negative decimal number"
                )
            }
            size = parsed
        }

        var modificationDate: Date?
        if let value = modifyValue {
            guard let parsed = modifyDate(bytes, value) else {
                throw FTPListParseError(
                    line: line, reason: "modify \"\(B.string(bytes, value))\" is not a valid YYYYMMDDHHMMSS[.sss] time"
                )
            }
            modificationDate = parsed
        }

        var isReadOnly = false
        var permissions: String?
        if let value = permValue {
            var canWrite = false
            for position in value {
                let byte = bytes[position]
                // Letters are case-sensitive: pyftpdlib's extra "M" (MFMT) is not RFC 3659's "m".
                if type == .directory {
                    if byte == 0x63 || byte == 0x6D { canWrite = true }  // "c", "m"
                } else if byte == 0x77 {  // "w"
                    canWrite = true
                }
            }
            isReadOnly = !canWrite
            permissions = B.string(bytes, value)
        }

        return FTPListEntry(
            name: B.string(bytes, name),
            type: type,
            size: size,
            modificationDate: modificationDate,
            symlinkTarget: symlinkTarget,
            permissions: permissions,
            unique: uniqueValue.map { B.string(bytes, $0) },
            isReadOnly: isReadOnly
        )
    }

    /// `YYYYMMDDHHMMSS[.fraction]` in UTC (RFC 3659 §2.3), or `nil` when malformed or out of range.
    static func modifyDate(_ bytes: [UInt8], _ range: Range<Int>) -> Date? {
        typealias B = FTPListingBytes
        guard range.count >= 14 else { return nil }
        let start = range.lowerBound
        guard let year = B.number(bytes, start..<(start + 4)),
              let month = B.number(bytes, (start + 4)..<(start + 6)),
              let day = B.number(bytes, (start + 6)..<(start + 8)),
              let hour = B.number(bytes, (start + 8)..<(start + 10)),
              let minute = B.number(bytes, (start + 10)..<(start + 12)),
              let second = B.number(bytes, (start + 12)..<(start + 14)),
              FTPListingCalendar.isValid(year: year, month: month, day: day),
              hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var fraction = 0.0
        if range.count > 14 {
            guard bytes[start + 14] == B.dot, range.count > 15 else { return nil }
            // Nanosecond precision at most; further digits are checked but do not count.
            var numerator = 0
            var denominator = 1
            for index in (start + 15)..<range.upperBound {
                guard B.isDigit(bytes[index]) else { return nil }
                if denominator < 1_000_000_000 {
                    numerator = numerator * 10 + Int(bytes[index] - B.zero)
                    denominator *= 10
                }
            }
            fraction = Double(numerator) / Double(denominator)
        }
        let seconds = FTPListingCalendar.secondsSinceEpoch(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second
        )
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }
}
