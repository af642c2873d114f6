import Foundation
@testable import GatewayTestSupport
import GatewayCore
@testable import GatewayWebDAV
import Testing

/// The source stamps every upload records in the local state store (``LocalStamps``), on every
/// WebDAV server the tests start: shown by `stat` and stamped listings, following the moves,
/// copies and removals made through the provider, and dropped once the file on the server changes.
@Suite("WebDAV local source stamps")
struct LocalStampTests {
    static let servers = ProviderFixture.all.filter { $0.name.hasPrefix("webdav") }

    @Test("an upload's stamp is kept locally and follows moves, copies and removals", arguments: servers)
    func follows(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            let dav = try #require(s.provider as? WebDAVProvider)
            let source = Date(timeIntervalSince1970: 1_650_000_000.75)
            var options = WriteOptions(modificationDate: source)
            options.contentHashes = [.md5: ContentHasher.hash(Data("local".utf8), .md5)]
            let written = try await dav.write(path: s.path("a.txt"), from: ByteStream(data: Data("local".utf8)), options: options)
            #expect(written.path == s.path("a.txt"))

            let stat = try #require(try await dav.attributesOfItem(path: s.path("a.txt")).sourceStamp, "\(fixture.name)")
            #expect(abs(stat.modificationDate!.timeIntervalSince(source)) < 1e-5)
            #expect(stat.hashes == options.contentHashes)
            let listed = try await dav.contentsOfDirectory(path: s.base, pageSize: 10, details: .sourceStamps).collectAll()
            #expect(listed.map(\.path) == [s.path("a.txt")] && listed.first?.sourceStamp == stat)
            #expect(try await dav.contentsOfDirectory(path: s.base).collectAll().first?.sourceStamp == nil, "plain listings leave stamps out")

            // A folder moved on the server takes its files' records along.
            try await dav.createFolder(path: s.path("d"), withIntermediateDirectories: false)
            try await dav.moveItem(path: s.path("a.txt"), to: s.path("d/b.txt"), overwrite: false)
            try await dav.moveItem(path: s.path("d"), to: s.path("e"), overwrite: false)
            #expect(dav.localStamps.stamp(of: s.path("a.txt")) == nil && dav.localStamps.stamp(of: s.path("d/b.txt")) == nil)
            #expect(try await dav.attributesOfItem(path: s.path("e/b.txt")).sourceStamp == stat)

            // A server-side copy is a file of its own: no stamp, and it replaces the target's.
            try await dav.writeContents(path: s.path("c.txt"), data: Data("other".utf8))
            try await dav.copyItem(path: s.path("e/b.txt"), to: s.path("c.txt"), overwrite: true, progress: nil)
            #expect(dav.localStamps.stamp(of: s.path("c.txt")) == nil)
            #expect(try await dav.attributesOfItem(path: s.path("c.txt")).sourceStamp == nil)

            try await dav.removeItem(path: s.path("e"), recursive: true)
            #expect(dav.localStamps.stamp(of: s.path("e/b.txt")) == nil)
        }
    }

    @Test("a file changed on the server since the upload loses its stamp; a new upload records a new one")
    func changedElsewhere() async throws {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let state = try TemporaryFolder.make()
        defer { state.remove() }
        let dav = WebDAVProvider(configuration: server.configuration(remoteName: "changed"), stateDirectory: URL(fileURLWithPath: state.path))
        let base = "/t-\(UUID().uuidString.prefix(8))"
        try await dav.createFolder(path: base, withIntermediateDirectories: false)
        defer { Task { try? await dav.removeItem(path: base, recursive: true) } }
        _ = try await dav.write(path: base + "/f", from: ByteStream(data: Data("12345".utf8)),
                                options: WriteOptions(modificationDate: Date(timeIntervalSince1970: 1_000_000)))
        #expect(try await dav.attributesOfItem(path: base + "/f").sourceStamp != nil)

        // Someone rewrites it with as many bytes, later (its time set ahead on the server's disk,
        // as a write some seconds later would: no waiting for the clock).
        try OutsideClient.webdav(base: server.url, user: server.user, password: server.password).write(base + "/f", Data("abcde".utf8))
        let onDisk = try #require(ProcessInfo.processInfo.environment["GATEWAY_TEST_STATE"]) + "/webdav-apache" + base + "/f"
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(10)], ofItemAtPath: onDisk)
        #expect(try await dav.attributesOfItem(path: base + "/f").sourceStamp == nil)
        let listed = try await dav.contentsOfDirectory(path: base, pageSize: 10, details: .sourceStamps).collectAll()
        #expect(listed.count == 1 && listed.first?.sourceStamp == nil)

        // A small upload that goes through a temporary name records the ETag it was given.
        let options = WriteOptions(overwrite: false, modificationDate: Date(timeIntervalSince1970: 2_000_000))
        _ = try await dav.write(path: base + "/g", from: ByteStream(data: Data("g".utf8)), options: options)
        let record = try #require(dav.localStamps.stamp(of: base + "/g"))
        let described = try await dav.attributesOfItem(path: base + "/g")
        #expect(record.etag != nil && record.etag == WebDAVProvider.etag(of: described))
        #expect(try await dav.attributesOfItem(path: base + "/g").sourceStamp?.modificationDate == Date(timeIntervalSince1970: 2_000_000))
    }

    @Test("without a usable state store, uploads still succeed and carry no stamp")
    func noStateStore() async throws {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let folder = try TemporaryFolder.make()
        defer { folder.remove() }
        // A file where the state folder should be: the store cannot be made.
        let blocked = folder.path + "/state"
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: blocked))
        let dav = WebDAVProvider(configuration: server.configuration(remoteName: "no-state"), stateDirectory: URL(fileURLWithPath: blocked))
        let base = "/t-\(UUID().uuidString.prefix(8))"
        try await dav.createFolder(path: base, withIntermediateDirectories: false)
        defer { Task { try? await dav.removeItem(path: base, recursive: true) } }
        _ = try await dav.write(path: base + "/f", from: ByteStream(data: Data("x".utf8)), options: WriteOptions(modificationDate: Date()))
        #expect(try await dav.contents(path: base + "/f") == Data("x".utf8))
        #expect(try await dav.attributesOfItem(path: base + "/f").sourceStamp == nil)
        try await dav.moveItem(path: base + "/f", to: base + "/g", overwrite: false)
        try await dav.removeItem(path: base + "/g", recursive: false)
    }
}
