import Foundation
import GatewayCore
import Testing

/// FreeDesktop `.trashinfo` records as trash-cli and GIO write them, and hostile ones.
@Suite("Trash info records")
struct TrashInfoTests {
    let utc = TimeZone(secondsFromGMT: 0)!

    @Test("encodes as trash-cli does: percent-encoded path, local time without a zone")
    func encoding() throws {
        let date = Date(timeIntervalSince1970: 1_795_011_000)  // 2026-11-18T14:10:00Z
        let info = TrashInfo(path: "/home/ann/report final ü&%.pdf", deletionDate: date)
        let text = String(decoding: info.encoded(timeZone: utc), as: UTF8.self)
        #expect(text == "[Trash Info]\nPath=/home/ann/report%20final%20%C3%BC%26%25.pdf\nDeletionDate=2026-11-18T14:10:00\n")
        let berlin = String(decoding: info.encoded(timeZone: TimeZone(secondsFromGMT: 3600)!), as: UTF8.self)
        #expect(berlin.hasSuffix("DeletionDate=2026-11-18T15:10:00\n"))
        let parsed = try TrashInfo.parse(info.encoded(timeZone: utc), timeZone: utc)
        #expect(parsed == info)
    }

    @Test("reads relative paths, CRLF, comments, other groups, zones and fractions")
    func tolerantReading() throws {
        let text = "# made by hand\r\n[Other Group]\r\nPath=/not/this\r\n[Trash Info]\r\nDeletionDate=2026-11-18T14:10:00.250+01:00\r\nPath=d/t.txt\r\nExtra=1\r\n"
        let info = try TrashInfo.parse(Data(text.utf8), timeZone: utc)
        #expect(info.path == "d/t.txt")
        #expect(info.deletionDate == Date(timeIntervalSince1970: 1_795_011_000 - 3600))
        let zulu = try TrashInfo.parse(Data("[Trash Info]\nPath=/a\nDeletionDate=2026-11-18T14:10:00Z\n".utf8), timeZone: TimeZone(secondsFromGMT: 7200)!)
        #expect(zulu.deletionDate == Date(timeIntervalSince1970: 1_795_011_000))
    }

    @Test("an unreadable date is no date, not a failure")
    func badDates() throws {
        for date in ["", "yesterday", "2026-13-01T00:00:00", "2026-11-18 14:10", "0000-01-01T00:00:00", "2026-11-18T14:10:00+1:00", "２０２６-11-18T14:10:00"] {
            let info = try TrashInfo.parse(Data("[Trash Info]\nPath=/a\nDeletionDate=\(date)\n".utf8), timeZone: utc)
            #expect(info.deletionDate == nil, "\(date)")
            #expect(info.path == "/a")
        }
    }

    @Test("malformed records fail as malformed, naming the file", arguments: [
        "Path=/a\nDeletionDate=2026-11-18T14:10:00\n",          // no group
        "[Trash Info]\nDeletionDate=2026-11-18T14:10:00\n",     // no path
        "[Trash Info]\nPath=/a%2\n",                            // broken escape
        "[Trash Info]\nPath=/a%00b\n",                          // NUL
        "[Trash Info]\nPath=%FF%FE\n",                          // not UTF-8
        "[Trash Info]\nPath=\n",                                // empty
        "[Other]\nPath=/a\n",                                   // wrong group
    ])
    func malformed(text: String) {
        #expect(throws: FileProviderError.self) { try TrashInfo.parse(Data(text.utf8), name: "x.trashinfo") }
        do {
            _ = try TrashInfo.parse(Data(text.utf8), name: "x.trashinfo")
        } catch {
            #expect(error.failureKind == .malformedResponse)
            #expect(ErrorMessage.path(of: error) == "x.trashinfo")
        }
    }

    @Test("a record over 64 KiB is refused before it is read through")
    func oversized() {
        let huge = "[Trash Info]\nPath=/" + String(repeating: "a", count: TrashInfo.maximumSize) + "\n"
        #expect(throws: FileProviderError.self) { try TrashInfo.parse(Data(huge.utf8)) }
    }

    @Test("a network trash's names are their own records: any path and the time survive, other names are not records")
    func namesAsRecords() throws {
        for path in ["/a.txt", "/docs/report final ü.pdf", "/x~y=z/%41", "/🚀/.hidden", "/semi;colon&amp"] {
            let info = TrashInfo(path: path, deletionDate: Date(timeIntervalSince1970: 1_795_011_000))
            let name = ProviderTrashVolume.recordName(for: info, random: "k3x9")
            #expect(!name.contains("/") && !name.contains("%") && name.split(separator: "~").count == 3, "\(name)")
            #expect(ProviderTrashVolume.record(inName: name) == info, "\(name)")
        }
        #expect(ProviderTrashVolume.recordName(for: TrashInfo(path: "/a b", deletionDate: Date(timeIntervalSince1970: 1_795_011_000)),
                                               random: "r") == "=2Fa=20b~20261118T141000Z~r")
        // Found by FuzzTrashInfo: a stamp of the right byte length with a multi-byte character in it.
        for name in ["=2Fx~k3x\u{FFFD}24T153000Z~r", "report.pdf", "a~b~c", "=2Fx~bad~r", "=2Fx~20261118T141000Z~", "=2F=00~20261118T141000Z~r", "=2F=G1~20261118T141000Z~r",
                     "=2Fa~20261118T141000Z~r~extra"] {
            #expect(ProviderTrashVolume.record(inName: name) == nil, "\(name)")
        }
    }
}
