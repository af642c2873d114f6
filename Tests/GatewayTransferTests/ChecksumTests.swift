import Foundation
@testable import GatewayTestSupport
import Logging
import StorageGateway
import Testing

/// `--checksum` runs and the hashes behind them: Local computes them, a Nextcloud-flavoured WebDAV
/// remote reads the ones the server stored (`oc:checksums`, kept by Apache as a dead property here)
/// and sends `OC-Checksum` with uploads; streamed copies verify a known hash before storing.
@Suite("Checksums")
struct ChecksumTests {
    func checksumEngine(_ dryRun: Bool = false) -> CopyEngine {
        var options = CopyOptions(dryRun: dryRun, retries: 1)
        options.checksum = true
        return CopyEngine(options: options)
    }

    func endpoints(_ from: ProviderScratch, _ to: ProviderScratch) -> (TransferEndpoint, TransferEndpoint) {
        (TransferEndpoint(provider: from.provider, path: from.path("src")), TransferEndpoint(provider: to.provider, path: to.path("dst")))
    }

    @Test("content hashes of known bytes (MD5, SHA-1, SHA-256), and Local computes the same from a file")
    func knownDigests() async throws {
        let data = Data("hello\n".utf8)
        #expect(ContentHasher.hash(data, .md5) == "b1946ac92492d2347c6235b4d2611184")
        #expect(ContentHasher.hash(data, .sha1) == "f572d396fae9206628714fb2ce00f72e94f2258f")
        #expect(ContentHasher.hash(data, .sha256) == "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03")
        try await ProviderFixture.local.run { s in
            try await s.provider.writeContents(path: s.path("h"), data: data)
            let local = try #require(s.provider as? any FileProviderHashing)
            #expect(try await local.hash(of: s.path("h"), algorithm: .sha1) == "f572d396fae9206628714fb2ce00f72e94f2258f")
            await expectFailure(.isADirectory) { _ = try await local.hash(of: s.base, algorithm: .md5) }
            await expectFailure(.notFound) { _ = try await local.hash(of: s.path("missing"), algorithm: .md5) }
        }
    }

    @Test("--checksum: same size and time but other bytes is copied; same bytes with another time is skipped")
    func localChecksum() async throws {
        try await ProviderFixture.local.run { from in
            try await ProviderFixture.local.run { to in
                let local = try #require(to.provider as? LocalFileProvider)
                try await from.provider.createFolder(path: from.path("src"), withIntermediateDirectories: false)
                try await to.provider.createFolder(path: to.path("dst"), withIntermediateDirectories: false)
                try await from.provider.writeContents(path: from.path("src/a"), data: Data("aaaa".utf8))
                try await from.provider.writeContents(path: from.path("src/b"), data: Data("same".utf8))
                try await to.provider.writeContents(path: to.path("dst/a"), data: Data("bbbb".utf8))
                try await to.provider.writeContents(path: to.path("dst/b"), data: Data("same".utf8))
                let sourceTime = try #require(try await from.provider.attributesOfItem(path: from.path("src/a")).modificationDate)
                try await local.setModificationDate(sourceTime, path: to.path("dst/a"))
                try await local.setModificationDate(sourceTime.addingTimeInterval(-86_400), path: to.path("dst/b"))
                let (source, destination) = endpoints(from, to)

                // By size and time, "a" looks unchanged and "b" changed; by content it is the other way round.
                let byTime = try await CopyEngine().check(source: source, destination: destination)
                #expect(byTime.different == ["b"])
                let byContent = try await checksumEngine().check(source: source, destination: destination)
                #expect(byContent.different == ["a"])
                #expect(byContent.matching == 1)
                #expect(byContent.notices.isEmpty)

                let dry = EventLog()
                _ = try await checksumEngine(true).run(.copy, from: source, to: destination, onEvent: dry.record)
                #expect(dry.wouldDo.map(\.path) == ["a"])

                let events = EventLog()
                let summary = try await checksumEngine().run(.copy, from: source, to: destination, onEvent: events.record)
                #expect(summary.failed == 0)
                #expect(summary.copied == 1)
                #expect(summary.skipped == 1)
                #expect(events.skips.contains { $0.path == "b" && $0.reason == .unchanged(.checksum) })
                #expect(try await to.provider.contents(path: to.path("dst/a")) == Data("aaaa".utf8))
                #expect(try await checksumEngine().check(source: source, destination: destination).isIdentical)
            }
        }
    }

    @Test("--checksum between sides with no hash in common compares sizes and says so")
    func noCommonHash() async throws {
        try await ProviderFixture.local.run { from in
            try await ProviderFixture.webdavApache.run { to in
                try await from.provider.createFolder(path: from.path("src"), withIntermediateDirectories: false)
                try await to.provider.createFolder(path: to.path("dst"), withIntermediateDirectories: false)
                try await from.provider.writeContents(path: from.path("src/a"), data: Data("aaaa".utf8))
                try await to.provider.writeContents(path: to.path("dst/a"), data: Data("bbbb".utf8))
                let (source, destination) = endpoints(from, to)
                let events = EventLog()
                let summary = try await checksumEngine().run(.copy, from: source, to: destination, onEvent: events.record)
                #expect(summary.skipped == 1)
                #expect(events.notices.contains { $0.contains("no hash type in common; comparing by size only") })
                #expect(events.skips.contains { $0.reason == .unchanged(.sizeWithoutChecksum) })
                let report = try await checksumEngine().check(source: source, destination: destination)
                #expect(report.notices.count == 1)
            }
        }
    }

    @Test("Nextcloud vendor: oc:checksums are read, OC-Checksum and X-OC-Mtime are sent, --checksum compares with stored hashes")
    func nextcloudHashes() async throws {
        try await ProviderFixture.local.run { from in
            try await ProviderFixture.webdavApacheNextcloud.run { to in
                let dav = try #require(to.provider as? WebDAVProvider)
                #expect(dav.capabilities.hashAlgorithms == [.sha1, .md5])
                try await from.provider.createFolder(path: from.path("src"), withIntermediateDirectories: false)
                let contents = Data("uploaded with a checksum \(UUID())".utf8)
                try await from.provider.writeContents(path: from.path("src/up.txt"), data: contents)
                let (source, destination) = endpoints(from, to)

                // The upload carries the source's SHA-1 for the server to check and keep.
                let summary = try await checksumEngine().run(.copy, from: source, to: destination)
                #expect(summary.copied == 1)
                let sha1 = ContentHasher.hash(contents, .sha1)
                let puts = try await ApacheAccessLog.requests("PUT", containing: String(to.base.dropFirst()))
                // ... and the source's modification time as X-OC-Mtime (Unix seconds).
                let mtime = try #require(try await from.provider.attributesOfItem(path: from.path("src/up.txt")).modificationDate)
                #expect(puts.contains { $0.hasSuffix(" \(Int64(mtime.timeIntervalSince1970)) SHA1:\(sha1)") }, "PUT lines: \(puts)")

                // setModificationDate is a PROPPATCH of DAV:lastmodified in Unix seconds (a dead property on Apache).
                try await dav.setModificationDate(Date(timeIntervalSince1970: 1_700_000_000), path: to.path("dst/up.txt"))
                let lastModified = try await ApacheDeadProperty.find("<D:lastmodified xmlns:D=\"DAV:\"/>", on: dav, path: to.path("dst/up.txt"))
                #expect(lastModified.contains(">1700000000</"), "PROPFIND answer: \(lastModified)")

                // Apache stores no OC-Checksum by itself: no hash yet, so same size means unchanged.
                #expect(try await dav.hash(of: to.path("dst/up.txt"), algorithm: .sha1) == nil)
                try await ApacheDeadProperty.setChecksums("SHA1:\(sha1.uppercased()) MD5:\(ContentHasher.hash(contents, .md5))",
                                                          on: dav, path: to.path("dst/up.txt"))
                let stored = try await dav.attributesOfItem(path: to.path("dst/up.txt"))
                #expect(stored.hashes == [.sha1: sha1, .md5: ContentHasher.hash(contents, .md5)])
                #expect(try await dav.hash(of: to.path("dst/up.txt"), algorithm: .sha1) == sha1)
                #expect(try await dav.contentsOfDirectory(path: to.path("dst")).collectAll().first?.hashes[.sha1] == sha1)

                // Same hash: skipped. A same-size change at the source: different, copied.
                let events = EventLog()
                _ = try await checksumEngine().run(.copy, from: source, to: destination, onEvent: events.record)
                #expect(events.skips.map(\.reason) == [.unchanged(.checksum)])
                var changed = contents
                changed[0] ^= 0xff
                try await from.provider.writeContents(path: from.path("src/up.txt"), data: changed)
                let again = try await checksumEngine().run(.copy, from: source, to: destination)
                #expect(again.copied == 1)
                #expect(try await dav.contents(path: to.path("dst/up.txt")) == changed)
            }
        }
    }

    /// `src/good.bin` and `src/bad.bin` of `size` bytes on the Nextcloud-flavoured Apache fixture,
    /// both with good.bin's SHA-1 stored (on bad.bin a hash that does not match its bytes, as after
    /// damage on the server); good.bin's bytes.
    func goodAndDamaged(_ size: Int, seed: UInt64, in from: ProviderScratch) async throws -> Data {
        let dav = try #require(from.provider as? WebDAVProvider)
        try await dav.createFolder(path: from.path("src"), withIntermediateDirectories: false)
        let good = Bytes.pattern(size, seed: seed)
        try await dav.writeContents(path: from.path("src/good.bin"), data: good)
        try await dav.writeContents(path: from.path("src/bad.bin"), data: Bytes.pattern(size, seed: seed + 1))
        for name in ["good.bin", "bad.bin"] {
            try await ApacheDeadProperty.setChecksums("SHA1:\(ContentHasher.hash(good, .sha1))", on: dav, path: from.path("src/" + name))
        }
        return good
    }

    @Test("a source's stored hash is verified while streaming: a mismatch stores nothing under the final name")
    func verification() async throws {
        try await ProviderFixture.webdavApacheNextcloud.run { from in
            try await ProviderFixture.local.run { to in
                let good = try await goodAndDamaged(300_000, seed: 7, in: from)
                let (source, destination) = endpoints(from, to)
                let events = EventLog()
                let summary = try await CopyEngine(options: CopyOptions(retries: 2, retryDelay: .milliseconds(10)))
                    .run(.copy, from: source, to: destination, onEvent: events.record)
                #expect(summary.copied == 1)
                #expect(summary.failed == 1)
                let failure = try #require(events.failedItems.first)
                #expect(failure.path == "bad.bin")
                #expect(failure.error.failureKind == .checksumMismatch)
                #expect("\(failure.error)".contains("sha1 checksum mismatch"))
                #expect(events.retries == 1, "a mismatch may be damage on the way: retried")
                #expect(try await to.provider.contents(path: to.path("dst/good.bin")) == good)
                let names = try await to.provider.contentsOfDirectory(path: to.path("dst")).collectAll().map(\.name)
                #expect(names == ["good.bin"], "nothing else, no temporary: \(names)")
            }
        }
    }

    @Test("a large file with a stored hash is read as its first MiB, then the rest, both pinned: byte-equal; a damaged one still fails")
    func splitVerifiedRead() async throws {
        try await ProviderFixture.webdavApacheNextcloud.run { from in
            try await ProviderFixture.local.run { to in
                let good = try await goodAndDamaged(3_000_000, seed: 9, in: from)
                var options = CopyOptions(retries: 1)
                options.multiThreadCutoff = 1 << 20
                let (source, destination) = endpoints(from, to)
                let events = EventLog()
                let summary = try await CopyEngine(options: options).run(.copy, from: source, to: destination, onEvent: events.record)
                #expect(summary.copied == 1 && summary.failed == 1)
                #expect(events.failedItems.first?.path == "bad.bin" && events.failedItems.first?.error.failureKind == .checksumMismatch,
                        "\(events.failedItems)")
                #expect(try await to.provider.contents(path: to.path("dst/good.bin")) == good)
                let names = try await to.provider.contentsOfDirectory(path: to.path("dst")).collectAll().map(\.name)
                #expect(names == ["good.bin"], "nothing else, no temporary: \(names)")
                // Two ranged reads, in order: 1 MiB, then the rest (Apache logs a 206 for each).
                let fragment = String(from.base.dropFirst()) + "/src/good.bin"
                let gets = try await ApacheAccessLog.requests("GET", containing: fragment)
                #expect(gets.count == 2 && gets.allSatisfy { $0.contains(" 206") }, "GETs: \(gets)")
                #expect(try await ApacheAccessLog.bodyBytes("GET", containing: fragment) == [1 << 20, 3_000_000 - (1 << 20)])
            }
        }
    }
}

extension EventLog {
    var skips: [(path: String, reason: SkipReason)] {
        all.compactMap { if case .skipped(let path, let reason) = $0 { (path, reason) } else { nil } }
    }

    var failedItems: [(path: String, error: any Error)] {
        all.compactMap { if case .failed(let path, _, _, _, let error) = $0 { (path, error) } else { nil } }
    }
}

/// Sets ownCloud's `oc:checksums` on a file of the Apache test server, where mod_dav keeps it as a
/// dead property and returns it in PROPFIND answers like Nextcloud does.
enum ApacheDeadProperty {
    static func client() throws -> HTTPClient {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        return HTTPClient(configuration: server.configuration(remoteName: "dead-properties"), logger: Logger(label: "test"))
    }

    /// The raw 207 answer to a PROPFIND (depth 0) for `prop`.
    static func find(_ prop: String, on provider: WebDAVProvider, path: String) async throws -> String {
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><D:propfind xmlns:D=\"DAV:\"><D:prop>\(prop)</D:prop></D:propfind>"
        let (head, answer) = try await client().send(HTTPRequest(
            method: "PROPFIND", url: try provider.url(of: path), path: path,
            headers: [(name: "Content-Type", value: "application/xml; charset=utf-8"), (name: "Depth", value: "0")], body: .data(Data(body.utf8))))
        #expect(head.status == 207)
        return String(decoding: answer, as: UTF8.self)
    }

    static func setChecksums(_ value: String, on provider: WebDAVProvider, path: String) async throws {
        let client = try client()
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop>\
            <oc:checksums><oc:checksum>\(value)</oc:checksum></oc:checksums></d:prop></d:set></d:propertyupdate>
            """
        let (head, answer) = try await client.send(HTTPRequest(
            method: "PROPPATCH", url: try provider.url(of: path), path: path,
            headers: [(name: "Content-Type", value: "application/xml; charset=utf-8")], body: .data(Data(body.utf8))))
        #expect(head.status == 207, "PROPPATCH answered \(head.status): \(String(decoding: answer, as: UTF8.self))")
    }
}
