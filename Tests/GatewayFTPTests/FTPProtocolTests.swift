import CCurl
import Foundation
@testable import GatewayTestSupport
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

    @Test("ProFTPD's FEAT: SITE COPY and HASH algorithms; the hash command for each algorithm; digests in replies")
    func proftpdFeatures() {
        let feat = FTPReply.parse(["211-Features:", " HASH CRC32;MD5;SHA-1*;SHA-256;SHA-512;", " MFMT", " SITE COPY", " SITE UTIME",
                                   " XMD5", " XSHA1", " MLST modify*;size*;type*;", "211 End"])[0]
        let features = FTPFeatures(featReply: feat)
        #expect(features.serverSideCopy)
        #expect(features.siteCommands == ["COPY", "UTIME"])
        #expect(features.hashNames == ["CRC32", "MD5", "SHA-1", "SHA-256", "SHA-512"])
        #expect(features.hashCommand(for: "SHA-1")! == ("XSHA1", nil))
        #expect(features.hashCommand(for: "SHA-256")! == ("HASH", "OPTS HASH SHA-256"))
        #expect(features.hashCommand(for: "SHA-384") == nil)
        #expect(FTPProvider.hashAlgorithms(features) == [.md5, .sha1, .sha256])
        #expect(!FTPFeatures(featReply: FTPReply.parse(["211-Features:", " SITE UTIME", "211 End"])[0]).serverSideCopy)
        #expect(FTPProvider.hashAlgorithms(.none).isEmpty)

        let sha1 = "f572d396fae9206628714fb2ce00f72e94f2258f"
        let xReply = FTPReply.parse(["250-Computing SHA1 digest", "250 \(sha1.uppercased())", "250 CWD command successful"])
        #expect(FTPProvider.digest(in: xReply, length: 40) == sha1)
        let hashReply = FTPReply.parse(["200 SHA-1", "213-Computing SHA-1 digest", "213 SHA-1 0-6 \(sha1) /a b.txt"])
        #expect(FTPProvider.digest(in: hashReply, length: 40) == sha1)
        #expect(FTPProvider.digest(in: FTPReply.parse(["250 not a digest"]), length: 40) == nil)
    }

    @Test("post-quote replies are those right after the upload's 150 and 226, whatever comes before or after")
    func postQuoteReplies() {
        let login = ["220 ready", "331 password?", "230 in", "257 \"/\" is the current directory"]
        let upload = ["229 Entering Extended Passive Mode (|||5000|)", "200 Switching to Binary mode.", "150 Ok to send data.", "226 Transfer complete."]
        let post = ["213 Modify=20200913122640; /t/.x.partial", "350 Ready for RNTO.", "250 Rename successful."]
        let expected = post.map { FTPReply.parse([$0])[0] }
        #expect(FTPClient.repliesAfterTransfer(FTPReply.parse(login + upload + post), count: 3) == expected)
        #expect(FTPClient.repliesAfterTransfer(FTPReply.parse(upload + post), count: 3) == expected, "a reused connection: no login")
        #expect(FTPClient.repliesAfterTransfer(FTPReply.parse(upload + post + ["221 Goodbye."]), count: 3) == expected,
                "a reply after them (QUIT) does not shift them")
        #expect(FTPClient.repliesAfterTransfer(FTPReply.parse(upload + post.prefix(2)), count: 3).isEmpty, "one missing: none")
        #expect(FTPClient.repliesAfterTransfer(FTPReply.parse(login + post), count: 3).isEmpty, "no upload seen: none")
        #expect(FTPClient.repliesAfterTransfer(FTPReply.parse(["150 Ok", "451 Aborted"] + post), count: 3).isEmpty, "a failed upload: none")
    }

    @Test("a failed TLS handshake on the data connection is a dropped connection (tried again); on the control connection it is not")
    func dataConnectionTLSFailure() throws {
        let control = ["220 ready", "234 Proceed with negotiation."]
        let data = control + ["331 password?", "230 in", "229 Entering Extended Passive Mode (|||5000|)", "200 Switching to Binary mode."]
        let error = try #require(FTPClient.failure(CURLE_SSL_CONNECT_ERROR, replies: data, path: "/a", command: "LIST", remote: "r"))
        #expect(error.failureKind == .connectionLost)
        #expect(error.isTransient)
        #expect(FTPClient.isConnectionFailure(error))
        #expect(FTPClient.failure(CURLE_SSL_CONNECT_ERROR, replies: control, path: "/a", command: "LIST", remote: "r") == nil,
                "a handshake refused at login stays a TLS failure (the caller's URLError), not retried")
        #expect(FTPClient.failure(CURLE_SSL_CONNECT_ERROR, replies: data + ["150 Ok to send data.", "522 SSL connection failed"],
                                  path: "/a", command: "STOR", remote: "r")?.failureKind == .connectionLost)
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
    func lines() throws {
        var splitter = LineSplitter(encoding: .utf8)
        var seen: [String] = []
        for chunk in ["a b\r", "\nc", "af\u{e9}\n\nlast"] {
            try splitter.append(Data(chunk.utf8))
            while let line = try splitter.next() { seen.append(line) }
        }
        if let last = splitter.finish() { seen.append(last) }
        #expect(seen == ["a b", "caf\u{e9}", "", "last"])
        var latin = LineSplitter(encoding: .isoLatin1)
        try latin.append(Data([0x63, 0x61, 0x66, 0xE9, 0x0D, 0x0A]))
        #expect(try latin.next() == "café")
    }

    @Test("a listing line that never ends fails past 64 KiB, and each byte is scanned once")
    func endlessLine() throws {
        var splitter = LineSplitter(encoding: .utf8)
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 4096)
        var appended = 0
        let clock = ContinuousClock()
        let started = clock.now
        do {
            while appended < 10 << 20 {
                try splitter.append(chunk)
                appended += chunk.count
                #expect(try splitter.next() == nil)
            }
            Issue.record("10 MiB without a line ending were accepted")
        } catch {
            #expect(appended <= LineSplitter.maximumLineLength)
        }
        // Lines split over many small chunks still come out whole.
        var small = LineSplitter(encoding: .utf8)
        let line = String(repeating: "y", count: 60_000)
        var found: [String] = []
        for byte in Data((line + "\n").utf8) {
            try small.append(Data([byte]))
            if let next = try small.next() { found.append(next) }
        }
        #expect(found == [line], "one whole line, once")
        #expect(clock.now - started < .seconds(5))
    }
}
