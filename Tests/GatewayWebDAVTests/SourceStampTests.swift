import Foundation
@testable import GatewayTestSupport
import GatewayCore
@testable import GatewayWebDAV
import Testing

/// Source stamps (`dead_properties`): the property's text, its validity rule, and what real servers
/// do with it: Apache keeps it, `rclone serve webdav` answers success and keeps nothing, Xandikos
/// refuses it. Each server is asked once, then left alone.
@Suite("WebDAV source stamps")
struct SourceStampTests {
    typealias Stamp = WebDAVProvider.StoredStamp

    @Test("the property's text reads back; hostile and foreign texts are no stamp")
    func encoding() throws {
        let stamp = Stamp(modificationDate: Date(timeIntervalSince1970: 1_700_000_000.123456), size: 42, written: 1_764_000_000,
                          hashes: [.sha1: "F572D396FAE9206628714FB2CE00F72E94F2258F", .md5: "not hex"])
        // Every field, in order; the time's last digits are the binary fraction's (Double).
        let pattern = try Regex(#"^v=1 mtime=1700000000\.12345[0-9]* size=42 written=1764000000 sha1=f572d396fae9206628714fb2ce00f72e94f2258f$"#)
        #expect(stamp.encoded.wholeMatch(of: pattern) != nil, "\(stamp.encoded)")
        let read = try #require(Stamp(parsing: stamp.encoded))
        #expect(read.size == 42 && read.written == 1_764_000_000)
        #expect(read.hashes == [.sha1: "f572d396fae9206628714fb2ce00f72e94f2258f"])
        #expect(abs(read.modificationDate!.timeIntervalSince1970 - 1_700_000_000.123456) < 1e-6)
        // A later version's extra field is skipped; no time at all is allowed.
        #expect(Stamp(parsing: "v=1 size=1 written=2 colour=blue")?.modificationDate == nil)
        for hostile in ["", "v=2 size=1 written=2", "v=1 written=2", "v=1 size=-1 written=2", "v=1 size=99999999999999999999 written=2",
                        "v=1 size=1", "v=1 size=1 written=2 mtime=nan", "v=1 size=1 written=2 mtime=inf", "v=1 size=1 written=2 mtime=1e400",
                        "v=1 size=1 written=2 mtime=1e5", "v=1 size=1 written=2 mtime=99999999999999", "garbage", "v=1 size=1 written",
                        "v=1 size=1 written=2 " + String(repeating: "x=y ", count: 400)] {
            #expect(Stamp(parsing: hostile) == nil, "\(hostile.prefix(60))")
        }
    }

    @Test("a stamp holds while the file keeps its size and was not written after it")
    func validity() {
        let stamp = Stamp(modificationDate: Date(timeIntervalSince1970: 1000), size: 5, written: 2000, hashes: [:])
        #expect(stamp.stamp(size: 5, lastModified: Date(timeIntervalSince1970: 2000))?.modificationDate == Date(timeIntervalSince1970: 1000))
        #expect(stamp.stamp(size: 5, lastModified: Date(timeIntervalSince1970: 1500)) != nil)
        #expect(stamp.stamp(size: 5, lastModified: Date(timeIntervalSince1970: 2001)) == nil)
        #expect(stamp.stamp(size: 6, lastModified: Date(timeIntervalSince1970: 1500)) == nil)
        #expect(stamp.stamp(size: nil, lastModified: Date(timeIntervalSince1970: 1500)) == nil)
        #expect(stamp.stamp(size: 5, lastModified: nil) == nil)
    }

    @Test("Apache keeps the stamp: stat and stamped listings show it, plain listings do not ask; a later outside write voids it")
    func apache() async throws {
        try await ProviderFixture.webdavApache.run { s in
            let dav = try #require(s.provider as? WebDAVProvider)
            let source = Date(timeIntervalSince1970: 1_600_000_000.5)
            var options = WriteOptions(modificationDate: source)
            options.contentHashes = [.sha256: ContentHasher.hash(Data("stamped".utf8), .sha256)]
            _ = try await dav.write(path: s.path("f.txt"), from: ByteStream(data: Data("stamped".utf8)), options: options)
            let patches = try await ApacheAccessLog.requests("PROPPATCH", containing: s.base + "/f.txt")
            #expect(patches.count == 1, "\(patches)")

            let stat = try await dav.attributesOfItem(path: s.path("f.txt"))
            let stamp = try #require(stat.sourceStamp)
            #expect(abs(stamp.modificationDate!.timeIntervalSince(source)) < 1e-5)
            #expect(stamp.hashes[.sha256] == ContentHasher.hash(Data("stamped".utf8), .sha256))
            #expect(stat.hashes.isEmpty, "the uploader's hashes stay in the stamp, not in the item's own")
            #expect(stat.modificationDate != stamp.modificationDate, "the item's own time stays the server's")

            let stamped = try await dav.contentsOfDirectory(path: s.base, pageSize: 100, details: .sourceStamps).collectAll()
            #expect(stamped.first?.sourceStamp == stamp)
            let plain = try await dav.contentsOfDirectory(path: s.base).collectAll()
            #expect(plain.first?.sourceStamp == nil)

            // A write with nothing to record replaces an earlier stamp with an empty one: Apache keeps
            // dead properties across a PUT to the same name, and the old time must not describe it.
            try await dav.writeContents(path: s.path("g.txt"), data: Data("first".utf8))
            _ = try await dav.write(path: s.path("g.txt"), from: ByteStream(data: Data("12345".utf8)), options: WriteOptions(modificationDate: source))
            #expect(try await dav.attributesOfItem(path: s.path("g.txt")).sourceStamp?.modificationDate != nil)
            try await dav.writeContents(path: s.path("g.txt"), data: Data("abcde".utf8))
            let rewritten = try await dav.attributesOfItem(path: s.path("g.txt"))
            #expect(rewritten.sourceStamp?.modificationDate == nil, "\(String(describing: rewritten.sourceStamp))")

            // Someone else writes the same number of bytes later: the stamp no longer describes it.
            try await Task.sleep(for: .milliseconds(2100))
            let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
            try OutsideClient.webdav(base: server.url, user: server.user, password: server.password).write(s.path("f.txt"), Data("STAMPED".utf8))
            let after = try await dav.attributesOfItem(path: s.path("f.txt"))
            #expect(after.sourceStamp == nil)
        }
    }

    @Test("dead_properties false: no PROPPATCH, no stamp asked for")
    func turnedOff() async throws {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let dav = WebDAVProvider(configuration: server.configuration(remoteName: "no-stamps"), deadProperties: false)
        let base = "/t-\(UUID().uuidString.prefix(8))"
        try await dav.createFolder(path: base, withIntermediateDirectories: false)
        defer { Task { try? await dav.removeItem(path: base, recursive: true) } }
        _ = try await dav.write(path: base + "/f", from: ByteStream(data: Data("x".utf8)), options: WriteOptions(modificationDate: Date()))
        #expect(try await ApacheAccessLog.requests("PROPPATCH", containing: base).isEmpty)
        #expect(try await dav.attributesOfItem(path: base + "/f").sourceStamp == nil)
    }

    @Test("servers that keep no dead property are asked once", arguments: ["GATEWAY_TEST_WEBDAV_RCLONE_URL", "GATEWAY_TEST_WEBDAV_XANDIKOS_URL"])
    func notKept(urlVariable: String) async throws {
        let server = try TestServers.webdav(urlVariable: urlVariable)
        let dav = WebDAVProvider(configuration: server.configuration(remoteName: "no-dead-properties"))
        let base = "/t-\(UUID().uuidString.prefix(8))"
        try await dav.createFolder(path: base, withIntermediateDirectories: false)
        defer { Task { try? await dav.removeItem(path: base, recursive: true) } }
        #expect(dav.recordsSourceStamps)
        for name in ["a", "b"] {
            _ = try await dav.write(path: base + "/" + name, from: ByteStream(data: Data(name.utf8)),
                                    options: WriteOptions(modificationDate: Date(timeIntervalSince1970: 1_000_000)))
            #expect(try await dav.contents(path: base + "/" + name) == Data(name.utf8))
        }
        #expect(!dav.recordsSourceStamps, "learned after the first file")
        #expect(try await dav.attributesOfItem(path: base + "/a").sourceStamp == nil)
    }
}
