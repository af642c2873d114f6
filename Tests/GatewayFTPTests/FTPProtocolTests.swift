import Foundation
@testable import GatewayFTP
@testable import GatewayTransport
import GatewayCore
import Testing

@Suite("FTP replies, features and paths")
struct FTPProtocolTests {
    @Test("replies: single and multi-line, split by code")
    func replies() {
        let lines = ["220 ready", "331 Password?", "230 ok", "211-Features:", " MLST type*;size*;modify*;", " UTF8", " MFMT",
                     "211 End", "250-Listing /a", " type=file;size=3; /a", "250 End", "550 No such file."]
        let replies = FTPReply.parse(lines)
        #expect(replies.map(\.code) == [220, 331, 230, 211, 250, 550])
        #expect(replies[3].innerLines == [" MLST type*;size*;modify*;", " UTF8", " MFMT"])
        #expect(replies[4].innerLines == [" type=file;size=3; /a"])
        #expect(replies[5].text == "No such file.")
        let features = FTPFeatures(featReply: replies[3])
        #expect(features.machineListings && features.utf8 && features.setModificationTime)
        #expect(features.mlstFacts == ["type", "size", "modify"])
        #expect(!FTPFeatures.none.machineListings)
    }

    @Test("a multi-line reply whose inner lines start with digits ends only at 'code space'")
    func multiLineWithDigits() {
        let replies = FTPReply.parse(["211-Status", "230 looks like a code but is text", "211-still inside", "211 End"])
        #expect(replies.count == 1)
        #expect(replies[0].lines.count == 4)
    }

    @Test("the remote's root: relative to the login folder unless the URL says absolute")
    func root() {
        func root(_ url: String, _ entry: String) -> String { FTPClient.root(baseURL: URL(string: url)!, entryPath: entry) }
        #expect(root("ftp://h/", "/") == "/")
        #expect(root("ftp://h", "/home/u") == "/home/u")
        #expect(root("ftp://h/pub/x/", "/home/u") == "/home/u/pub/x")
        #expect(root("ftp://h//srv/data/", "/home/u") == "/srv/data")
        #expect(root("ftp://h/%2Fsrv/data", "/home/u") == "/srv/data")
        #expect(root("ftp://h/a%20b/", "/") == "/a b")
        #expect(root("ftp://h/a/../b/", "/") == "/b")
    }

    @Test("URLs: every unsafe byte is encoded, so ';type=', '?' and '#' stay part of names")
    func urls() {
        let client = FTPClient(configuration: FTPClientConfiguration(baseURL: URL(string: "ftp://127.0.0.1:2121/")!, remoteName: "t"),
                               logger: .init(label: "t"))
        #expect(client.url("/a b/x;type=a", folder: false) == "ftp://127.0.0.1:2121//a%20b/x%3Btype%3Da")
        #expect(client.url("/q?#%", folder: true) == "ftp://127.0.0.1:2121//q%3F%23%25/")
        #expect(client.url("/日本", folder: false) == "ftp://127.0.0.1:2121//%E6%97%A5%E6%9C%AC")
        let latin = FTPClient(configuration: FTPClientConfiguration(baseURL: URL(string: "ftp://h/")!, remoteName: "t", encoding: .isoLatin1),
                              logger: .init(label: "t"))
        #expect(latin.url("/café", folder: false) == "ftp://h//caf%E9")
    }

    @Test("reply codes classify as the issue asks: transient, auth, not found, permission, space")
    func classification() {
        for code in [421, 425, 426, 450, 451] { #expect(FileProviderFTPError(replyCode: code, path: "/x").isTransient, "\(code)") }
        #expect(FileProviderFTPError(replyCode: 530, path: "/").failureKind == .notAuthenticated)
        #expect(FileProviderFTPError(replyCode: 550, path: "/x").failureKind == .notFound)
        #expect(FileProviderFTPError(replyCode: 550, path: "/x", kind: .permissionDenied).failureKind == .permissionDenied)
        #expect(FileProviderFTPError(replyCode: 553, path: "/x").failureKind == .permissionDenied)
        #expect(FileProviderFTPError(replyCode: 552, path: "/x").failureKind == .noSpace)
        #expect(!FileProviderFTPError(replyCode: 552, path: "/x").isTransient)
        let error = FileProviderFTPError(replyCode: 552, command: "STOR", path: "/big", serverText: "Quota exceeded\r\n")
        #expect(ErrorMessage.reason(for: error) == "FTP 552 exceeded storage allocation: Quota exceeded")
        #expect(ErrorMessage.path(of: error) == "/big")
    }

    @Test("MFMT stamps are UTC YYYYMMDDHHMMSS")
    func mfmt() {
        #expect(FTPProvider.mfmtStamp(Date(timeIntervalSince1970: 1_500_000_000)) == "20170714024000")
    }

    @Test("line splitting: LF and CRLF, a last line without an ending, bytes split anywhere")
    func lines() {
        var splitter = LineSplitter(encoding: .utf8)
        var seen: [String] = []
        for chunk in ["a b\r", "\nc", "af\u{e9}\n\nlast"] {
            splitter.append(Data(chunk.utf8))
            while let line = splitter.next() { seen.append(line) }
        }
        if let last = splitter.finish() { seen.append(last) }
        #expect(seen == ["a b", "caf\u{e9}", "", "last"])
        var latin = LineSplitter(encoding: .isoLatin1)
        latin.append(Data([0x63, 0x61, 0x66, 0xE9, 0x0D, 0x0A]))
        #expect(latin.next() == "café")
    }
}
