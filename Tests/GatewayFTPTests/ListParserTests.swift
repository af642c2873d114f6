import Foundation
@testable import GatewayTestSupport
import GatewayCore
@testable import GatewayFTP
import Testing

// MARK: - Fixtures

/// The fixed "now" of every test: 2026-11-21 12:00:00 UTC.
let listingNow = Date(timeIntervalSince1970: 1_795_262_400)

/// An expected UTC time, compared component by component (plus the fraction of a second).
struct ListingStamp: Sendable, CustomStringConvertible {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int = 0
    var minute: Int = 0
    var second: Int = 0
    var fraction: Double = 0

    var description: String {
        "\(year)-\(month)-\(day) \(hour):\(minute):\(second)+\(fraction)"
    }
}

/// One listing line and what the parser must make of it.
struct ListingCase: Sendable, CustomTestStringConvertible {
    var server: String
    var line: String
    var name: String
    var type: FileObjectType = .file
    var size: Int64?
    var date: ListingStamp?
    var target: String?
    var permissions: String?
    var unique: String?
    var readOnly: Bool = false

    var testDescription: String { "\(server): \(name)" }
}

/// What a parser did with a line.
enum ListingOutcome {
    case entry(FTPListEntry)
    case skipped
    case failed(FTPListParseError)

    var entry: FTPListEntry? {
        if case .entry(let entry) = self { return entry }
        return nil
    }

    var error: FTPListParseError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

func listOutcome(_ line: String, now: Date = listingNow) -> ListingOutcome {
    do throws(FTPListParseError) {
        guard let entry = try LISTParser.parse(line, now: now) else { return .skipped }
        return .entry(entry)
    } catch {
        return .failed(error)
    }
}

func mlsdOutcome(_ line: String) -> ListingOutcome {
    do throws(FTPListParseError) {
        guard let entry = try MLSDParser.parse(line) else { return .skipped }
        return .entry(entry)
    } catch {
        return .failed(error)
    }
}

/// `[year, month, day, hour, minute, second]` of `date` in UTC, read with Foundation's calendar
/// (an implementation independent of the parsers' own arithmetic).
func utcComponents(_ date: Date) -> [Int] {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? .current
    let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
    return [parts.year ?? -1, parts.month ?? -1, parts.day ?? -1, parts.hour ?? -1, parts.minute ?? -1, parts.second ?? -1]
}

/// Checks one parsed entry against its case.
func checkListing(_ entry: FTPListEntry, against expected: ListingCase) {
    #expect(entry.name == expected.name)
    #expect(entry.type == expected.type)
    #expect(entry.size == expected.size)
    #expect(entry.symlinkTarget == expected.target)
    if let permissions = expected.permissions {
        #expect(entry.permissions == permissions)
    }
    #expect(entry.unique == expected.unique)
    #expect(entry.isReadOnly == expected.readOnly)
    if let stamp = expected.date {
        guard let date = entry.modificationDate else {
            Issue.record("no modification date for \(expected.line)")
            return
        }
        #expect(utcComponents(date) == [stamp.year, stamp.month, stamp.day, stamp.hour, stamp.minute, stamp.second])
        let fraction = date.timeIntervalSince1970 - date.timeIntervalSince1970.rounded(.down)
        #expect(abs(fraction - stamp.fraction) < 1e-6, "fraction \(fraction) != \(stamp.fraction)")
    } else {
        #expect(entry.modificationDate == nil)
    }
}

// MARK: - LIST corpus

let unixListCorpus: [ListingCase] = [
    // vsftpd (numeric owners by default, 4-space link column)
    ListingCase(
        server: "vsftpd", line: "drwxr-xr-x    2 1000     1000         4096 Nov 20 09:21 photos",
        name: "photos", type: .directory, size: 4096, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21),
        permissions: "rwxr-xr-x"
    ),
    ListingCase(
        server: "vsftpd (later today: still this year)",
        line: "-rw-r--r--    1 1000     1000            6 Nov 21 14:40 h.txt",
        name: "h.txt", size: 6, date: ListingStamp(year: 2026, month: 11, day: 21, hour: 14, minute: 40), permissions: "rw-r--r--"
    ),
    ListingCase(
        server: "vsftpd (old file: year column)",
        line: "-rw-------    1 ftp      ftp      1073741824 Dec 25  2025 big.iso",
        name: "big.iso", size: 1_073_741_824, date: ListingStamp(year: 2025, month: 12, day: 25), permissions: "rw-------"
    ),
    ListingCase(
        server: "vsftpd symlink", line: "lrwxrwxrwx    1 0        0               7 Mar 14 09:21 latest -> v2.0.1",
        name: "latest", type: .symbolicLink, size: 7, date: ListingStamp(year: 2026, month: 3, day: 14, hour: 9, minute: 21),
        target: "v2.0.1"
    ),
    // ProFTPD
    ListingCase(
        server: "ProFTPD", line: "-rw-r--r--   1 alice    staff    20971520 Jan  5  2024 archive 2023.tar.gz",
        name: "archive 2023.tar.gz", size: 20_971_520, date: ListingStamp(year: 2024, month: 1, day: 5)
    ),
    ListingCase(
        server: "ProFTPD setgid folder", line: "drwxr-sr-x   3 alice    staff        4096 Oct 31 23:59 shared",
        name: "shared", type: .directory, size: 4096, date: ListingStamp(year: 2026, month: 10, day: 31, hour: 23, minute: 59),
        permissions: "rwxr-sr-x"
    ),
    ListingCase(
        server: "ProFTPD leap day", line: "-rw-r--r--   1 alice    staff           0 Feb 29  2024 leap.txt",
        name: "leap.txt", size: 0, date: ListingStamp(year: 2024, month: 2, day: 29)
    ),
    // Pure-FTPd
    ListingCase(
        server: "Pure-FTPd", line: "-rw-r--r--    1 1000       1000          123456 Jul  4 08:05 résumé final.pdf",
        name: "résumé final.pdf", size: 123_456, date: ListingStamp(year: 2026, month: 7, day: 4, hour: 8, minute: 5)
    ),
    ListingCase(
        server: "Pure-FTPd sticky folder", line: "drwxrwxrwt    2 0          0               4096 Sep  1  2019 tmp",
        name: "tmp", type: .directory, size: 4096, date: ListingStamp(year: 2019, month: 9, day: 1), permissions: "rwxrwxrwt"
    ),
    // FileZilla Server
    ListingCase(
        server: "FileZilla Server", line: "-rw-r--r-- 1 ftp ftp            6 Nov 21 14:40 hello world.txt",
        name: "hello world.txt", size: 6, date: ListingStamp(year: 2026, month: 11, day: 21, hour: 14, minute: 40)
    ),
    ListingCase(
        server: "FileZilla Server (Dec 25 is last year's)",
        line: "drwxr-xr-x 1 ftp ftp            0 Dec 25 18:00 Holiday photos",
        name: "Holiday photos", type: .directory, size: 0, date: ListingStamp(year: 2025, month: 12, day: 25, hour: 18)
    ),
    // Serv-U
    ListingCase(
        server: "Serv-U", line: "-rw-rw-rw-   1 user     group        1234 Mar 14 09:21 report.docx",
        name: "report.docx", size: 1234, date: ListingStamp(year: 2026, month: 3, day: 14, hour: 9, minute: 21)
    ),
    // IIS in Unix mode
    ListingCase(
        server: "IIS (Unix style, read-only)", line: "-r-xr-xr-x   1 owner    group            1234 Mar 14  2024 web.config",
        name: "web.config", size: 1234, date: ListingStamp(year: 2024, month: 3, day: 14), permissions: "r-xr-xr-x",
        readOnly: true
    ),
    // busybox
    ListingCase(
        server: "busybox", line: "-rw-r--r--    1 0        0             6 Nov 21 14:40 b.txt",
        name: "b.txt", size: 6, date: ListingStamp(year: 2026, month: 11, day: 21, hour: 14, minute: 40)
    ),
    ListingCase(
        server: "busybox character device", line: "crw-rw----    1 0        5          4,   0 Nov 21 14:40 tty0",
        name: "tty0", type: .other, size: nil, date: ListingStamp(year: 2026, month: 11, day: 21, hour: 14, minute: 40)
    ),
    ListingCase(
        server: "busybox symlink", line: "lrwxrwxrwx    1 0        0            12 Nov 20 10:00 sh -> /bin/busybox",
        name: "sh", type: .symbolicLink, size: 12, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 10),
        target: "/bin/busybox"
    ),
    // NAS boxes
    ListingCase(
        server: "Synology (ACL marker)", line: "drwxrwxrwx+  3 admin    users        4096 Nov 20 09:21 homes",
        name: "homes", type: .directory, size: 4096, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21),
        permissions: "rwxrwxrwx"
    ),
    ListingCase(
        server: "QNAP", line: "-rw-rw-rw-   1 admin    administrators   1048576 Aug 12 17:33 Backup (2).zip",
        name: "Backup (2).zip", size: 1_048_576, date: ListingStamp(year: 2026, month: 8, day: 12, hour: 17, minute: 33)
    ),
    ListingCase(
        server: "macOS (xattr marker)", line: "drwxr-xr-x@  3 ted  staff    96 Nov 20 09:21 Pictures",
        name: "Pictures", type: .directory, size: 96, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "Linux (SELinux marker)", line: "-rw-r--r--. 1 root root 1234 Nov 20 09:21 selinux.conf",
        name: "selinux.conf", size: 1234, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    // Awkward columns
    ListingCase(
        server: "missing group column", line: "-rw-r--r-- 1 ftp 1234 Jan  1 12:00 file",
        name: "file", size: 1234, date: ListingStamp(year: 2026, month: 1, day: 1, hour: 12)
    ),
    ListingCase(
        server: "missing link count", line: "-rw-r--r--   ftp  ftp  1234 Jan  1 12:00 nolinks",
        name: "nolinks", size: 1234, date: ListingStamp(year: 2026, month: 1, day: 1, hour: 12)
    ),
    ListingCase(
        server: "group with a space", line: "-rwxrwxrwx 1 owner Domain Users 1234 Mar 14 09:21 spaced group.txt",
        name: "spaced group.txt", size: 1234, date: ListingStamp(year: 2026, month: 3, day: 14, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "owner named like a month", line: "-rw-r--r-- 1 may 20 2048 Mar 14 09:21 tricky",
        name: "tricky", size: 2048, date: ListingStamp(year: 2026, month: 3, day: 14, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "setuid, S and T bits", line: "-rwsr-Sr-T   1 root root 8 Jun  1  2020 weird-bits",
        name: "weird-bits", size: 8, date: ListingStamp(year: 2020, month: 6, day: 1), permissions: "rwsr-Sr-T"
    ),
    ListingCase(
        server: "upper-case month", line: "-rw-r--r-- 1 u g 12 MAR 14 09:21 upper.txt",
        name: "upper.txt", size: 12, date: ListingStamp(year: 2026, month: 3, day: 14, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "leading spaces in the name", line: "-rw-r--r--    1 u g 12 Nov 20 09:21   two leading spaces",
        name: "  two leading spaces", size: 12, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "runs of spaces in the name", line: "-rw-r--r-- 1 u g 12 Nov 20 09:21 a  b   c",
        name: "a  b   c", size: 12, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "trailing space in the name (CRLF removed)", line: "-rw-r--r-- 1 u g 12 Nov 20 09:21 trailing \r\n",
        name: "trailing ", size: 12, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "old year padded to the time column, name with leading space",
        line: "-rw-r--r-- 1 u g 12 Nov 20  2019  spaced-old",
        name: " spaced-old", size: 12, date: ListingStamp(year: 2019, month: 11, day: 20)
    ),
    ListingCase(
        server: "name that looks like a date", line: "-rw-r--r-- 1 u g 5 Nov 20 09:21 Mar 14 09:21 x",
        name: "Mar 14 09:21 x", size: 5, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "symlink with spaces on both sides", line: "lrwxrwxrwx 1 u g 22 Nov 20 09:21 My Link -> /mnt/My Target Dir",
        name: "My Link", type: .symbolicLink, size: 22, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21),
        target: "/mnt/My Target Dir"
    ),
    ListingCase(
        server: "Japanese name", line: "-rw-r--r-- 1 u g 5 Nov 20 09:21 日本語 ファイル.txt",
        name: "日本語 ファイル.txt", size: 5, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "emoji name", line: "-rw-r--r-- 1 u g 5 Nov 20 09:21 🙂 emoji.txt",
        name: "🙂 emoji.txt", size: 5, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "largest size", line: "-rw-r--r-- 1 u g 9223372036854775807 Nov 20 09:21 max",
        name: "max", size: Int64.max, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    // Other file types
    ListingCase(
        server: "block device, major,minor in one column", line: "brw-rw----  1 root disk 8,0 Nov 20 09:21 sda",
        name: "sda", type: .other, size: nil, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "FIFO", line: "prw-r--r-- 1 u g 0 Nov 20 09:21 fifo",
        name: "fifo", type: .other, size: 0, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "socket", line: "srwxrwxrwx 1 u g 0 Nov 20 09:21 app.sock",
        name: "app.sock", type: .other, size: 0, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "Solaris door", line: "Dr--r--r-- 1 root root 0 Nov 20 09:21 door",
        name: "door", type: .other, size: 0, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21),
        readOnly: true
    ),
    // Other date styles
    ListingCase(
        server: "ISO long date", line: "-rw-r--r-- 1 user group 1234 2024-03-14 09:21 name with spaces",
        name: "name with spaces", size: 1234, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "ISO full date with offset",
        line: "-rw-r--r-- 1 user group 1234 2024-03-14 09:21:30.123456789 +0100 iso full.txt",
        name: "iso full.txt", size: 1234,
        date: ListingStamp(year: 2024, month: 3, day: 14, hour: 8, minute: 21, second: 30, fraction: 0.123456789)
    ),
    ListingCase(
        server: "BSD ls -lT", line: "-rw-r--r--  1 ted  staff  1234 Mar 14 09:21:30 2024 bsd.txt",
        name: "bsd.txt", size: 1234, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21, second: 30)
    ),
]

let dosListCorpus: [ListingCase] = [
    ListingCase(
        server: "IIS folder", line: "03-14-24  09:21AM       <DIR>          name with spaces",
        name: "name with spaces", type: .directory, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "IIS file, PM", line: "03-14-24  09:21PM                 1234 file.txt",
        name: "file.txt", size: 1234, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 21, minute: 21)
    ),
    ListingCase(
        server: "IIS four-digit year", line: "03-14-2024  09:21AM       <DIR>          four digit year",
        name: "four digit year", type: .directory, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "IIS 24-hour time", line: "03-14-24  21:21                   1234 24h.txt",
        name: "24h.txt", size: 1234, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 21, minute: 21)
    ),
    ListingCase(
        server: "12AM is midnight", line: "12-31-99  12:00AM                    0 midnight.txt",
        name: "midnight.txt", size: 0, date: ListingStamp(year: 1999, month: 12, day: 31)
    ),
    ListingCase(
        server: "12PM is noon", line: "01-01-00  12:00PM                    5 noon.txt",
        name: "noon.txt", size: 5, date: ListingStamp(year: 2000, month: 1, day: 1, hour: 12)
    ),
    ListingCase(
        server: "two-digit year 69 is 2069", line: "06-15-69  08:00AM                    1 pivot69.txt",
        name: "pivot69.txt", size: 1, date: ListingStamp(year: 2069, month: 6, day: 15, hour: 8)
    ),
    ListingCase(
        server: "two-digit year 70 is 1970", line: "06-15-70  08:00AM                    1 pivot70.txt",
        name: "pivot70.txt", size: 1, date: ListingStamp(year: 1970, month: 6, day: 15, hour: 8)
    ),
    ListingCase(
        server: "IIS today", line: "11-21-26  02:40PM                    6 h.txt\r\n",
        name: "h.txt", size: 6, date: ListingStamp(year: 2026, month: 11, day: 21, hour: 14, minute: 40)
    ),
    ListingCase(
        server: "IIS name with a leading space", line: "03-14-24  09:21PM                 1234  leading.txt",
        name: " leading.txt", size: 1234, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 21, minute: 21)
    ),
    ListingCase(
        server: "IIS huge file", line: "03-14-24  09:21PM         123456789012 huge.bin",
        name: "huge.bin", size: 123_456_789_012, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 21, minute: 21)
    ),
    ListingCase(
        server: "ISO date DOS style", line: "2024-03-14  09:21       <DIR>          iso dos dir",
        name: "iso dos dir", type: .directory, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "separate AM/PM token", line: "03-14-24  09:21 PM               1234 spaced meridiem.txt",
        name: "spaced meridiem.txt", size: 1234, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 21, minute: 21)
    ),
    ListingCase(
        server: "thousands separators", line: "03-14-24  09:21AM                1,234 commas.txt",
        name: "commas.txt", size: 1234, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21)
    ),
    ListingCase(
        server: "Windows junction", line: #"03-14-24  09:21AM    <JUNCTION>     Documents [C:\Users\me\Documents]"#,
        name: "Documents", type: .symbolicLink, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21),
        target: #"C:\Users\me\Documents"#
    ),
]

// MARK: - MLSD corpus

let mlsdCorpus: [ListingCase] = [
    ListingCase(
        server: "pyftpdlib file",
        line: "modify=20261121144002;perm=radfwMT;size=6;type=file;unique=fe00gf7c850; hé.txt",
        name: "hé.txt", size: 6, date: ListingStamp(year: 2026, month: 11, day: 21, hour: 14, minute: 40, second: 2),
        permissions: "radfwMT", unique: "fe00gf7c850"
    ),
    ListingCase(
        server: "pyftpdlib folder",
        line: "modify=20261120092100;perm=elradfmwMT;type=dir;unique=fe00gf7c851; My Photos",
        name: "My Photos", type: .directory, date: ListingStamp(year: 2026, month: 11, day: 20, hour: 9, minute: 21),
        permissions: "elradfmwMT", unique: "fe00gf7c851"
    ),
    ListingCase(
        server: "ProFTPD read-only file with UNIX facts",
        line: "modify=20240314092130;perm=adfr;size=60;type=file;unique=FE03U10001724;UNIX.group=1001;UNIX.mode=0664;UNIX.owner=2000; kalahari.diz",
        name: "kalahari.diz", size: 60, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21, second: 30),
        permissions: "adfr", unique: "FE03U10001724", readOnly: true
    ),
    ListingCase(
        server: "ProFTPD folder",
        line: "modify=20210930020540;perm=flcdmpe;type=dir;unique=36U22;UNIX.group=65534;UNIX.mode=0755;UNIX.owner=112; mrtg",
        name: "mrtg", type: .directory, date: ListingStamp(year: 2021, month: 9, day: 30, hour: 2, minute: 5, second: 40),
        permissions: "flcdmpe", unique: "36U22"
    ),
    ListingCase(
        server: "ProFTPD read-only folder",
        line: "modify=20210930020540;perm=fle;type=dir;unique=36U23;UNIX.mode=0555; locked",
        name: "locked", type: .directory, date: ListingStamp(year: 2021, month: 9, day: 30, hour: 2, minute: 5, second: 40),
        permissions: "fle", unique: "36U23", readOnly: true
    ),
    ListingCase(
        server: "ProFTPD symlink with target",
        line: "modify=20140728100902;perm=adfrw;size=32;type=OS.unix=slink:/var/log/httpd;UNIX.mode=0777;UNIX.owner=647;unique=fd01g1220c04; access-logs",
        name: "access-logs", type: .symbolicLink, size: 32,
        date: ListingStamp(year: 2014, month: 7, day: 28, hour: 10, minute: 9, second: 2), target: "/var/log/httpd",
        unique: "fd01g1220c04"
    ),
    ListingCase(
        server: "ProFTPD symlink with empty target",
        line: "type=OS.unix=slink:;size=32;modify=20140728100902;UNIX.mode=0777;UNIX.uid=647;UNIX.gid=649; empty-target",
        name: "empty-target", type: .symbolicLink, size: 32,
        date: ListingStamp(year: 2014, month: 7, day: 28, hour: 10, minute: 9, second: 2)
    ),
    ListingCase(
        server: "symlink without target", line: "Type=OS.unix=symlink;Modify=20200517103000; link",
        name: "link", type: .symbolicLink, date: ListingStamp(year: 2020, month: 5, day: 17, hour: 10, minute: 30)
    ),
    ListingCase(
        server: "RFC 3659 example slink", line: "type=OS.unix=slink:/usr/bin; bin",
        name: "bin", type: .symbolicLink, target: "/usr/bin"
    ),
    ListingCase(
        server: "character device", line: "type=OS.unix=chr-13/29;perm=;unique==keVO1+5G4; device",
        name: "device", type: .other, permissions: "", unique: "=keVO1+5G4", readOnly: true
    ),
    ListingCase(
        server: "block device", line: "type=OS.unix=blk-11/108;perm=;unique==keVO1+6G4; block",
        name: "block", type: .other, permissions: "", unique: "=keVO1+6G4", readOnly: true
    ),
    ListingCase(
        server: "fractional modify", line: "type=file;size=1234;modify=20240314092130.123; frac.txt",
        name: "frac.txt", size: 1234,
        date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21, second: 30, fraction: 0.123)
    ),
    ListingCase(
        server: "long fraction", line: "modify=20240314092130.123456789012;type=file;size=1; nanos",
        name: "nanos", size: 1,
        date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21, second: 30, fraction: 0.123456789)
    ),
    ListingCase(
        server: "mixed-case facts, leading zero size", line: "Type=File;Size=010;Modify=20200517103000; octal.txt",
        name: "octal.txt", size: 10, date: ListingStamp(year: 2020, month: 5, day: 17, hour: 10, minute: 30)
    ),
    ListingCase(
        server: "name with semicolons, '=' and double spaces",
        line: "type=file;size=3;modify=20240314092130; a; b=c;  d",
        name: "a; b=c;  d", size: 3, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21, second: 30)
    ),
    ListingCase(
        server: "name with leading spaces", line: "type=file;size=3;   spaced",
        name: "  spaced", size: 3
    ),
    ListingCase(
        server: "no facts", line: " bare name.txt",
        name: "bare name.txt"
    ),
    ListingCase(
        server: "MLST reply line with its leading space",
        line: " modify=20240102030405;size=42;type=file;UNIX.mode=0640; /dir/a file.txt",
        name: "/dir/a file.txt", size: 42, date: ListingStamp(year: 2024, month: 1, day: 2, hour: 3, minute: 4, second: 5)
    ),
    ListingCase(
        server: "group name with a space",
        line: "type=file;size=7;UNIX.groupname=domain users;modify=20240314092130; g.txt",
        name: "g.txt", size: 7, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21, second: 30)
    ),
    ListingCase(
        server: "no type fact", line: "size=5;modify=20240314092130; notype.bin",
        name: "notype.bin", size: 5, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21, second: 30)
    ),
    ListingCase(
        server: "last semicolon missing", line: "type=file;size=1 lenient.txt",
        name: "lenient.txt", size: 1
    ),
    ListingCase(
        server: "folder with sizd", line: "type=dir;sizd=4096;modify=20070218021044;UNIX.mode=0755; prog",
        name: "prog", type: .directory, date: ListingStamp(year: 2007, month: 2, day: 18, hour: 2, minute: 10, second: 44)
    ),
    ListingCase(
        server: "IIS folder", line: "type=dir;modify=20240314092130.517; Program Files",
        name: "Program Files", type: .directory,
        date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21, second: 30, fraction: 0.517)
    ),
    ListingCase(
        server: "CRLF kept on the line", line: "type=file;size=2;modify=20240314092130; crlf.txt\r\n",
        name: "crlf.txt", size: 2, date: ListingStamp(year: 2024, month: 3, day: 14, hour: 9, minute: 21, second: 30)
    ),
    ListingCase(
        server: "unknown type word", line: "type=OS.Windows=reparse;size=0; odd",
        name: "odd", type: .other, size: 0
    ),
]

// MARK: - Tests

@Suite("FTP LIST parser")
struct LISTParserTests {
    @Test("Unix ls -l lines from vsftpd, ProFTPD, Pure-FTPd, FileZilla, Serv-U, busybox, NAS boxes", arguments: unixListCorpus)
    func unixLines(expected: ListingCase) {
        switch listOutcome(expected.line) {
        case .entry(let entry): checkListing(entry, against: expected)
        case .skipped: Issue.record("skipped: \(expected.line)")
        case .failed(let error): Issue.record("\(error)")
        }
    }

    @Test("DOS / IIS lines", arguments: dosListCorpus)
    func dosLines(expected: ListingCase) {
        switch listOutcome(expected.line) {
        case .entry(let entry): checkListing(entry, against: expected)
        case .skipped: Issue.record("skipped: \(expected.line)")
        case .failed(let error): Issue.record("\(error)")
        }
    }

    @Test("year inference from now (2026-11-21 12:00 UTC): at most one day ahead", arguments: [
        ("Nov 20 09:21", 2026), ("Nov 21 14:40", 2026), ("Nov 22 11:59", 2026), ("Nov 22 12:01", 2025),
        ("Dec 25 18:00", 2025), ("Jan  1 00:00", 2026), ("Feb 29 10:00", 2024), ("Mar  1 00:00", 2026),
    ])
    func yearInference(date: String, year: Int) throws {
        let entry = try #require(listOutcome("-rw-r--r-- 1 u g 1 \(date) f").entry)
        let parsed = try #require(entry.modificationDate)
        #expect(utcComponents(parsed)[0] == year)
    }

    @Test("year inference across New Year's Eve: early January is next year")
    func yearInferenceAtYearEnd() throws {
        let newYearsEve = Date(timeIntervalSince1970: 1_798_757_999)  // 2026-12-31 22:59:59 UTC
        #expect(utcComponents(newYearsEve) == [2026, 12, 31, 22, 59, 59])
        let soon = try #require(listOutcome("-rw-r--r-- 1 u g 1 Jan  1 00:30 f", now: newYearsEve).entry)
        let soonDate = try #require(soon.modificationDate)
        #expect(utcComponents(soonDate) == [2027, 1, 1, 0, 30, 0])
        let old = try #require(listOutcome("-rw-r--r-- 1 u g 1 Jan  2 00:30 f", now: newYearsEve).entry)
        let oldDate = try #require(old.modificationDate)
        #expect(utcComponents(oldDate) == [2026, 1, 2, 0, 30, 0])
    }

    @Test("lines to skip: blank, total, '.' and '..'", arguments: [
        "", "   ", "\r\n", "total 12", "total 0", "TOTAL 3",
        "drw-rw-rw-   1 user     group           0 Mar 14  2024 .",
        "drwxr-xr-x    3 1000     1000         4096 Nov 20 09:21 ..",
        "03-14-24  09:21AM       <DIR>          .",
        "03-14-24  09:21AM       <DIR>          ..",
    ])
    func skipped(line: String) {
        let outcome = listOutcome(line)
        guard case .skipped = outcome else {
            Issue.record("expected a skip, got \(outcome)")
            return
        }
    }

    @Test("malformed lines throw an FTPListParseError carrying the line", arguments: [
        "garbage",
        "-rw-r--r-- 1 a b notanumber Jan 1 12:00 x",
        "drwxr-xr-x 2 u g 4096 Foo 14 09:21 x",
        "-rw-r--r-- 1 u g 12 Feb 30 09:21 x",
        "-rw-r--r-- 1 u g 12 Apr 31  2024 x",
        "-rw-r--r-- 1 u g 12 Feb 29  2023 x",
        "-rw-r--r-- 1 u g 12 Nov 20 09:21",
        "-rw-r--r-- 1 u g 12 Nov 20 09:21 ",
        "-rw-r--r-- 1 u g 12 Nov 20 25:00 x",
        "-rw-r--r-- 1 u g 12 Nov 32 09:21 x",
        "-rw-r--r-- 1 u g -5 Nov 20 09:21 x",
        "-rw-r--r-- 1 u g 9223372036854775808 Nov 20 09:21 overflow",
        "crw-rw---- 1 root tty 4,x Nov 20 09:21 tty",
        "-rw-r--r-- 1 u g 12 2024-13-14 09:21 x",
        "drwxr-xr-x",
        "d",
        "-",
        "---------- 1",
        "03-14-24  09:21PM",
        "03-14-24  09:21PM                 1234",
        "13-14-24  09:21PM                   12 x",
        "03-14-24  13:21PM                   12 x",
        "03-14-24  09:21PM                  abc x",
        "02-30-24  09:21AM                   12 x",
        "03-14-24  09:21XM                   12 x",
        "+i8388621.29609,m824255902,/,\tdev",
        "FILE.TXT;1     1/3    14-MAR-2024 09:21:00  [GROUP,OWNER]  (RWED,RWED,RE,)",
        "550 No files found",
        "é",
        "\u{0}",
        "🙂🙂🙂 -rw-r--r-- 1 u g 1 Nov 20 09:21 x",
        String(repeating: "x", count: 1000),
    ])
    func malformed(line: String) {
        let outcome = listOutcome(line)
        guard let error = outcome.error else {
            Issue.record("expected an error, got \(outcome)")
            return
        }
        #expect(error.line == String(line.prefix(200)))
        #expect(error.line.count <= FTPListParseError.maximumLineLength)
        #expect(!error.reason.isEmpty)
        #expect(error.description.hasPrefix("unparseable listing line \""))
    }

    @Test("the error keeps the first 200 characters of a long line and says why")
    func errorText() {
        let line = "-rw-r--r-- 1 a b notanumber Jan 1 12:00 " + String(repeating: "é", count: 500)
        let error = listOutcome(line).error
        #expect(error?.line.count == 200)
        #expect(error?.line == String(line.prefix(200)))
        #expect(error?.reason.contains("notanumber") == true)
    }

    @Test("many lines: every generated entry comes back intact")
    func bulk() {
        var count = 0
        for index in 0..<10_000 {
            let line = "-rw-r--r--    1 1000     1000     \(index) Nov 20 09:21 file \(index).bin"
            guard let entry = listOutcome(line).entry else {
                Issue.record("failed: \(line)")
                return
            }
            if entry.name == "file \(index).bin", entry.size == Int64(index) { count += 1 }
        }
        #expect(count == 10_000)
    }
}

@Suite("FTP MLSD parser")
struct MLSDParserTests {
    @Test("MLSD lines from pyftpdlib, ProFTPD, IIS and RFC 3659 examples", arguments: mlsdCorpus)
    func lines(expected: ListingCase) {
        switch mlsdOutcome(expected.line) {
        case .entry(let entry): checkListing(entry, against: expected)
        case .skipped: Issue.record("skipped: \(expected.line)")
        case .failed(let error): Issue.record("\(error)")
        }
    }

    @Test("lines to skip: blank, cdir, pdir, '.' and '..'", arguments: [
        "", "  ", "\r\n",
        "type=cdir;perm=el;unique==keVO1+ZF4; test",
        "type=pdir;perm=e;unique==keVO1+d?3; ..",
        "Type=cdir;Modify=20180731114724;UNIX.mode=0755; /tmp",
        "TYPE=PDIR;modify=bogus; /",
        "type=file; .",
        "type=dir;modify=20240314092130; ..",
    ])
    func skipped(line: String) {
        let outcome = mlsdOutcome(line)
        guard case .skipped = outcome else {
            Issue.record("expected a skip, got \(outcome)")
            return
        }
    }

    @Test("malformed lines throw an FTPListParseError carrying the line", arguments: [
        "modify=2024;type=file; x",
        "type=file;size=abc; x",
        "type=file;size=1",
        "type=file;size=-1; x",
        "type=file;size=+1; x",
        "type=file;size=; x",
        "type=file;size=99999999999999999999; huge",
        "modify=20241332000000;type=file; x",
        "modify=20240230000000;type=file; x",
        "modify=20240314246000;type=file; x",
        "modify=20240314092130.;type=file; x",
        "modify=20240314092130Z;type=file; x",
        "modify=2024031409213a;type=file; x",
        "type=file;nonsense; x",
        "type=file; ",
        "garbage",
        "garbage line",
        "é",
        "\u{0}",
    ])
    func malformed(line: String) {
        let outcome = mlsdOutcome(line)
        guard let error = outcome.error else {
            Issue.record("expected an error, got \(outcome)")
            return
        }
        #expect(error.line == line)
        #expect(!error.reason.isEmpty)
    }
}

/// A small deterministic generator (SplitMix64) so the fuzz test is reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("FTP listing parsers never trap")
struct ListingFuzzTests {
    /// Lines whose every prefix either fails, is skipped, or yields a prefix of the full name.
    static let prefixLines: [(line: String, isMLSD: Bool)] = [
        ("-rw-r--r--    1 1000     1000            6 Nov 21 14:40 h.txt", false),
        ("drwxr-xr-x 1 ftp ftp            0 Dec 25 18:00 Holiday photos", false),
        ("lrwxrwxrwx    1 0        0               7 Mar 14 09:21 latest -> v2.0.1", false),
        ("crw-rw----    1 0        5          4,   0 Nov 21 14:40 tty0", false),
        ("-rw-r--r--   1 alice    staff    20971520 Jan  5  2024 archive 2023.tar.gz", false),
        ("03-14-24  09:21AM       <DIR>          name with spaces", false),
        ("03-14-2024  09:21PM                 1234 file.txt", false),
        ("modify=20261121144002;perm=radfwMT;size=6;type=file;unique=fe00gf7c850; hé.txt", true),
        ("type=OS.unix=slink:/usr/bin;modify=20240314092130.123; bin dir", true),
        ("Type=cdir;Modify=20180731114724;UNIX.mode=0755; /tmp", true),
    ]

    @Test("every prefix of valid lines: return or throw, and a returned name is a prefix of the real one")
    func prefixes() {
        for (line, isMLSD) in Self.prefixLines {
            let parse = { (text: String) -> ListingOutcome in isMLSD ? mlsdOutcome(text) : listOutcome(text) }
            let full = parse(line)
            let fullName: String
            switch full {
            case .entry(let entry): fullName = entry.name
            case .skipped: fullName = ""
            case .failed(let error):
                Issue.record("the full line must parse: \(error)")
                continue
            }
            let characters = Array(line)
            for length in 0...characters.count {
                let prefix = String(characters[0..<length])
                switch parse(prefix) {
                case .entry(let entry):
                    #expect(!entry.name.isEmpty)
                    let nameIsPrefix = fullName.utf8.starts(with: entry.name.utf8)
                        || entry.name.utf8.starts(with: fullName.utf8)
                    #expect(nameIsPrefix, "prefix \(prefix.debugDescription) gave name \(entry.name.debugDescription)")
                case .skipped:
                    break
                case .failed(let error):
                    #expect(error.line == prefix)
                    #expect(!error.reason.isEmpty)
                }
            }
            // And every UTF-8 byte prefix (cutting "é" in half yields U+FFFD), for crashes only.
            let bytes = Array(line.utf8)
            for length in 0...bytes.count {
                let prefix = String(decoding: bytes[0..<length], as: UTF8.self)
                if case .failed(let error) = parse(prefix) {
                    #expect(!error.reason.isEmpty)
                }
            }
        }
    }

    @Test("random edits of the whole corpus: return or throw, errors carry the line")
    func mutations() {
        var generator = SplitMix64(state: 20_261_121)
        let pieces: [String] = [
            " ", "  ", "\t", ":", "-", ";", "=", ",", ".", "0", "9", "é", "🙂", "\u{0}", "\r", "\n",
            "Mar", " -> ", "<DIR>", "AM", "PM", "type=", "; ", "slink:", "+", "[", "]",
        ]
        let lines = (unixListCorpus + dosListCorpus + mlsdCorpus).map(\.line)
        var entries = 0, skipped = 0, failed = 0
        for line in lines {
            for _ in 0..<60 {
                var characters = Array(line)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0 where !characters.isEmpty:
                    characters.remove(at: Int.random(in: 0..<characters.count, using: &generator))
                case 1:
                    let piece = pieces[Int.random(in: 0..<pieces.count, using: &generator)]
                    characters.insert(contentsOf: piece, at: Int.random(in: 0...characters.count, using: &generator))
                case 2 where !characters.isEmpty:
                    let piece = pieces[Int.random(in: 0..<pieces.count, using: &generator)]
                    let index = Int.random(in: 0..<characters.count, using: &generator)
                    characters.replaceSubrange(index...index, with: piece)
                default:
                    characters.removeLast(Int.random(in: 0...characters.count, using: &generator))
                }
                let mutated = String(characters)
                for outcome in [listOutcome(mutated), mlsdOutcome(mutated)] {
                    switch outcome {
                    case .entry(let entry):
                        entries += 1
                        #expect(!entry.name.isEmpty)
                    case .skipped:
                        skipped += 1
                    case .failed(let error):
                        failed += 1
                        #expect(error.line == String(mutated.prefix(200)))
                        #expect(!error.reason.isEmpty)
                    }
                }
            }
        }
        // Edits that keep a line readable and edits that break it both happen: a parser that
        // refused everything, or accepted everything, fails here.
        #expect(entries > lines.count * 10 && failed > lines.count * 10, "entries \(entries), skipped \(skipped), failed \(failed)")
    }
}
