import Foundation
@testable import GatewayTestSupport
import GatewayCore
@testable import GatewayWebDAV
import Testing

/// Source stamps: the record's text, its validity rule, the local record every upload makes, and
/// what real servers do with the dead property (`dead_properties`): Apache keeps it, `rclone serve
/// webdav` answers success and keeps nothing, Xandikos refuses it. Each server is asked once, then
/// left alone.
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

    @Test("a stamp holds while the file keeps its size and was not written after it; an ETag, where both sides know one, decides instead of the time")
    func validity() {
        let stamp = Stamp(modificationDate: Date(timeIntervalSince1970: 1000), size: 5, written: 2000, hashes: [:])
        #expect(stamp.describes(size: 5, lastModified: Date(timeIntervalSince1970: 2000), etag: nil))
        #expect(stamp.describes(size: 5, lastModified: Date(timeIntervalSince1970: 1500), etag: "\"x\""), "no ETag recorded: the time decides")
        #expect(!stamp.describes(size: 5, lastModified: Date(timeIntervalSince1970: 2001), etag: nil))
        #expect(!stamp.describes(size: 6, lastModified: Date(timeIntervalSince1970: 1500), etag: nil))
        #expect(!stamp.describes(size: nil, lastModified: Date(timeIntervalSince1970: 1500), etag: nil))
        #expect(!stamp.describes(size: 5, lastModified: nil, etag: nil))
        #expect(stamp.sourceStamp.modificationDate == Date(timeIntervalSince1970: 1000))

        let tagged = Stamp(modificationDate: nil, size: 5, written: 2000, hashes: [:], etag: "\"5-abc\"")
        #expect(Stamp(parsing: tagged.encoded) == tagged, "\(tagged.encoded)")
        #expect(tagged.describes(size: 5, lastModified: Date(timeIntervalSince1970: 1500), etag: "\"5-abc\""))
        #expect(!tagged.describes(size: 5, lastModified: Date(timeIntervalSince1970: 1500), etag: "\"5-abd\""),
                "a rewrite within the same second changes the ETag")
        #expect(!tagged.describes(size: 6, lastModified: Date(timeIntervalSince1970: 1500), etag: "\"5-abc\""))
        // Apache answers a PUT with a weak ETag during the second the file was written, and lists
        // the same version with a strong one afterwards.
        let weak = Stamp(modificationDate: nil, size: 5, written: 2000, hashes: [:], etag: "W/\"5-abc\"")
        #expect(weak.describes(size: 5, lastModified: Date(timeIntervalSince1970: 1500), etag: "\"5-abc\""))
        #expect(!weak.describes(size: 5, lastModified: Date(timeIntervalSince1970: 1500), etag: "\"5-abd\""))
        #expect(tagged.describes(size: 5, lastModified: Date(timeIntervalSince1970: 1500), etag: nil), "no ETag in the listing: the time decides")
        #expect(!tagged.describes(size: 5, lastModified: Date(timeIntervalSince1970: 2001), etag: nil))
        // An ETag the one-line format cannot hold is not recorded.
        for unstorable in ["", "\"a b\"", "\"tab\there\"", "\"caf\u{E9}\"", String(repeating: "x", count: 257)] {
            #expect(Stamp(modificationDate: nil, size: 1, written: 2, hashes: [:], etag: unstorable).etag == nil, "\(unstorable.prefix(20))")
        }
    }

    @Test("dead_properties: Apache keeps the stamp for every machine: stat and stamped listings show it, plain listings do not ask; a later outside write voids it")
    func apache() async throws {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let writerState = try TemporaryFolder.make(), readerState = try TemporaryFolder.make()
        defer { writerState.remove(); readerState.remove() }
        let writer = WebDAVProvider(configuration: server.configuration(remoteName: "stamps"), deadProperties: true,
                                    stateDirectory: URL(fileURLWithPath: writerState.path))
        // Another machine: its own state store, so only the server's property can tell it.
        let dav = WebDAVProvider(configuration: server.configuration(remoteName: "stamps"), deadProperties: true,
                                 stateDirectory: URL(fileURLWithPath: readerState.path))
        let base = "/t-\(UUID().uuidString.prefix(8))"
        try await dav.createFolder(path: base, withIntermediateDirectories: false)
        try await withScratch({ (ProviderScratch(provider: dav, base: base), { try? await dav.removeItem(path: base, recursive: true) }) }) { s in
            let source = Date(timeIntervalSince1970: 1_600_000_000.5)
            var options = WriteOptions(modificationDate: source)
            options.contentHashes = [.sha256: ContentHasher.hash(Data("stamped".utf8), .sha256)]
            _ = try await writer.write(path: s.path("f.txt"), from: ByteStream(data: Data("stamped".utf8)), options: options)
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
            try await writer.writeContents(path: s.path("g.txt"), data: Data("first".utf8))
            _ = try await writer.write(path: s.path("g.txt"), from: ByteStream(data: Data("12345".utf8)), options: WriteOptions(modificationDate: source))
            #expect(try await dav.attributesOfItem(path: s.path("g.txt")).sourceStamp?.modificationDate != nil)
            try await writer.writeContents(path: s.path("g.txt"), data: Data("abcde".utf8))
            let rewritten = try await dav.attributesOfItem(path: s.path("g.txt"))
            #expect(rewritten.sourceStamp?.modificationDate == nil, "\(String(describing: rewritten.sourceStamp))")

            // Someone else writes the same number of bytes later: the stamp no longer describes it.
            try await Task.sleep(for: .milliseconds(2100))
            try OutsideClient.webdav(base: server.url, user: server.user, password: server.password).write(s.path("f.txt"), Data("STAMPED".utf8))
            let after = try await dav.attributesOfItem(path: s.path("f.txt"))
            #expect(after.sourceStamp == nil)
            #expect(try await writer.attributesOfItem(path: s.path("f.txt")).sourceStamp == nil, "nor the writer's local record")
        }
    }

    @Test("by default the stamp is kept on this machine only: no PROPPATCH, no property asked for, another machine sees none")
    func localByDefault() async throws {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let state = try TemporaryFolder.make(), otherState = try TemporaryFolder.make()
        defer { state.remove(); otherState.remove() }
        let dav = WebDAVProvider(configuration: server.configuration(remoteName: "local-stamps"), stateDirectory: URL(fileURLWithPath: state.path))
        #expect(!dav.deadProperties && !dav.recordsServerStamps)
        let base = "/t-\(UUID().uuidString.prefix(8))"
        try await dav.createFolder(path: base, withIntermediateDirectories: false)
        defer { Task { try? await dav.removeItem(path: base, recursive: true) } }
        let source = Date(timeIntervalSince1970: 1_600_000_000.25)
        _ = try await dav.write(path: base + "/f", from: ByteStream(data: Data("x".utf8)), options: WriteOptions(modificationDate: source))
        #expect(try await ApacheAccessLog.requests("PROPPATCH", containing: base).isEmpty)
        let stamp = try #require(try await dav.attributesOfItem(path: base + "/f").sourceStamp)
        #expect(abs(stamp.modificationDate!.timeIntervalSince(source)) < 1e-5)
        #expect(FileManager.default.fileExists(atPath: state.path + "/properties.sqlite"))
        // The stat asked the server for no dead property.
        #expect(dav.propfindBody == WebDAVProvider.propfindBody)
        let other = WebDAVProvider(configuration: server.configuration(remoteName: "local-stamps"), stateDirectory: URL(fileURLWithPath: otherState.path))
        #expect(try await other.attributesOfItem(path: base + "/f").sourceStamp == nil)
    }

    @Test("servers that keep no dead property are asked once", arguments: ["GATEWAY_TEST_WEBDAV_RCLONE_URL", "GATEWAY_TEST_WEBDAV_XANDIKOS_URL"])
    func notKept(urlVariable: String) async throws {
        let server = try TestServers.webdav(urlVariable: urlVariable)
        let state = try TemporaryFolder.make(), otherState = try TemporaryFolder.make()
        defer { state.remove(); otherState.remove() }
        let dav = WebDAVProvider(configuration: server.configuration(remoteName: "no-dead-properties"), deadProperties: true,
                                 stateDirectory: URL(fileURLWithPath: state.path))
        let base = "/t-\(UUID().uuidString.prefix(8))"
        try await dav.createFolder(path: base, withIntermediateDirectories: false)
        defer { Task { try? await dav.removeItem(path: base, recursive: true) } }
        #expect(dav.recordsServerStamps)
        for name in ["a", "b"] {
            _ = try await dav.write(path: base + "/" + name, from: ByteStream(data: Data(name.utf8)),
                                    options: WriteOptions(modificationDate: Date(timeIntervalSince1970: 1_000_000)))
            #expect(try await dav.contents(path: base + "/" + name) == Data(name.utf8))
        }
        #expect(!dav.recordsServerStamps, "learned after the first file")
        // Nothing on the server: another machine sees no stamp; this one has its local record.
        let other = WebDAVProvider(configuration: server.configuration(remoteName: "no-dead-properties"), deadProperties: true,
                                   stateDirectory: URL(fileURLWithPath: otherState.path))
        #expect(try await other.attributesOfItem(path: base + "/a").sourceStamp == nil)
        #expect(try await dav.attributesOfItem(path: base + "/a").sourceStamp?.modificationDate == Date(timeIntervalSince1970: 1_000_000))
    }
}
