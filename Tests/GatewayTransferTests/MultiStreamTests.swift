import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// `--multi-thread-streams`: a large file downloaded in several ranged streams at once, each piece
/// written at its offset into a local file that appears under its name only when complete; or
/// uploaded to WebDAV as several ranged `PUT`s where the server stores ranges.
@Suite("Multi-stream downloads and uploads", .serialized)
struct MultiStreamTests {
    func engine(streams: Int, retries: Int = 3) -> CopyEngine {
        var options = CopyOptions(retries: retries, retryDelay: .milliseconds(10))
        options.multiThreadStreams = streams
        options.multiThreadCutoff = 1 << 20
        return CopyEngine(options: options)
    }

    /// Copies `data` as `big.bin` with 4 streams and checks the result: one file copied, every byte
    /// counted, byte-equal, nothing else in the destination folder.
    func copyInFourStreams(_ data: Data, from: ProviderScratch, to: ProviderScratch) async throws {
        try await from.provider.writeContents(path: from.path("big.bin"), data: data)
        let progress = TransferProgress()
        let summary = try await engine(streams: 4).run(
            .copy, from: TransferEndpoint(provider: from.provider, path: from.path("big.bin")),
            to: TransferEndpoint(provider: to.provider, path: to.path("big.bin")), progress: progress)
        #expect(summary.failed == 0)
        #expect(summary.copied == 1)
        #expect(progress.snapshot.completedBytes == Int64(data.count))
        #expect(try await to.provider.contents(path: to.path("big.bin")) == data)
        #expect(try await to.provider.contentsOfDirectory(path: to.base).collectAll().map(\.name) == ["big.bin"])
    }

    @Test("WebDAV to Local in 4 ranged streams: byte-equal, one ranged GET per stream, nothing else left")
    func webdavToLocal() async throws {
        let data = Bytes.pattern(6_500_000, seed: 21)
        try await ProviderFixture.webdavApache.run { from in
            try await ProviderFixture.local.run { to in
                try await copyInFourStreams(data, from: from, to: to)
                let gets = try await ApacheAccessLog.requests("GET", containing: String(from.base.dropFirst()) + "/big.bin")
                #expect(gets.count == 4, "GETs: \(gets)")
                #expect(gets.allSatisfy { $0.contains(" 206 ") }, "GETs: \(gets)")
            }
        }
    }

    @Test("Local to Local in 3 streams keeps the modification time; a small file takes one; a second run skips both")
    func localToLocal() async throws {
        let data = Bytes.pattern(3_500_000, seed: 22)
        try await ProviderFixture.local.run { from in
            try await ProviderFixture.local.run { to in
                try await from.provider.createFolder(path: from.path("src"), withIntermediateDirectories: false)
                try await from.provider.writeContents(path: from.path("src/big.bin"), data: data)
                try await from.provider.writeContents(path: from.path("src/small.bin"), data: Data("small".utf8))
                let summary = try await engine(streams: 3).run(
                    .copy, from: TransferEndpoint(provider: from.provider, path: from.path("src")),
                    to: TransferEndpoint(provider: to.provider, path: to.path("dst")))
                #expect(summary.copied == 2)
                #expect(try await to.provider.contents(path: to.path("dst/big.bin")) == data)
                #expect(try await to.provider.contents(path: to.path("dst/small.bin")) == Data("small".utf8))
                let source = try await from.provider.attributesOfItem(path: from.path("src/big.bin"))
                let copy = try await to.provider.attributesOfItem(path: to.path("dst/big.bin"))
                #expect(copy.modificationDate == source.modificationDate)
                #expect(try await engine(streams: 3).run(.copy, from: TransferEndpoint(provider: from.provider, path: from.path("src")),
                                                         to: TransferEndpoint(provider: to.provider, path: to.path("dst"))).skipped == 2)
            }
        }
    }

    @Test("a stream cut mid-transfer fails the file: nothing under the final name, no temporary left")
    func cutStream() async throws {
        let local = try TemporaryFolder.make()
        defer { local.remove() }
        let (direct, folder) = try await ApacheFixtures.serverFile(Bytes.pattern(6_000_000, seed: 23))
        defer { Task { try? await direct.removeItem(path: folder, recursive: true) } }
        let (proxiedDAV, proxy) = try ApacheFixtures.proxied(dropAfter: 800_000, maxDrops: 100)
        defer { proxy.stop() }
        let events = EventLog()
        let summary = try await engine(streams: 4, retries: 1).run(
            .copy, from: TransferEndpoint(provider: proxiedDAV, path: folder + "/big.bin"),
            to: TransferEndpoint(provider: try LocalFileProvider(name: "l", root: local.path), path: "/big.bin"), onEvent: events.record)
        #expect(summary.failed == 1)
        #expect(proxy.drops >= 1)
        #expect(events.failures.first.map { $0.failureKind.isTransient } == true, "\(events.failures)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: local.path).isEmpty)
    }

    @Test("Local to WebDAV (Apache) in 4 ranged PUTs after a one-byte probe: byte-equal, nothing else left")
    func localToWebDAVInRanges() async throws {
        let data = Bytes.pattern(6_500_000, seed: 24)
        try await ProviderFixture.local.run { from in
            try await ProviderFixture.webdavApache.run { to in
                try await copyInFourStreams(data, from: from, to: to)
                let ranges = try await ApacheAccessLog.requests("PUT", containing: String(to.base.dropFirst()) + "/.big.bin.")
                    .map { $0.split(separator: " ").dropFirst(3).prefix(2).joined(separator: " ") }
                // The probe (the last byte), then 2 MiB ranges in any order.
                #expect(ranges.first == "bytes 6499999-6499999/6500000", "PUTs: \(ranges)")
                #expect(Set(ranges.dropFirst()) == ["bytes 0-2097151/6500000", "bytes 2097152-4194303/6500000",
                                                    "bytes 4194304-6291455/6500000", "bytes 6291456-6499999/6500000"], "PUTs: \(ranges)")
            }
        }
    }

    @Test("FTP (vsftpd) to WebDAV (Apache): 4 ranged reads feed 4 ranged PUTs, byte-equal")
    func ftpToWebDAVInRanges() async throws {
        let data = Bytes.pattern(6_500_000, seed: 32)
        try await ProviderFixture.ftpVsftpd.run { from in
            try await ProviderFixture.webdavApache.run { to in
                try await copyInFourStreams(data, from: from, to: to)
                let puts = try await ApacheAccessLog.requests("PUT", containing: String(to.base.dropFirst()) + "/.big.bin.")
                #expect(puts.count == 5 && puts.dropFirst().allSatisfy { $0.contains(" bytes ") }, "PUTs: \(puts)")
            }
        }
    }

    @Test("a server that ignores Content-Range (rclone serve webdav) gets one plain PUT; the next file skips the probe")
    func ignoredContentRange() async throws {
        let records = LogRecords()
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_RCLONE_URL")
        let dav = WebDAVProvider(configuration: server.configuration(remoteName: "no-ranges"), logger: records.logger(label: "test.dav"))
        let folder = "/no-ranges-\(UUID().uuidString.prefix(8))"
        try await dav.createFolder(path: folder, withIntermediateDirectories: false)
        defer { Task { try? await dav.removeItem(path: folder, recursive: true) } }
        let first = Bytes.pattern(3_000_000, seed: 25)
        let second = Bytes.pattern(2_500_000, seed: 26)
        let (local, source) = try localSource(["first.bin": first, "second.bin": second])
        defer { local.remove() }

        records.clear()
        var summary = try await engine(streams: 4).run(.copy, from: TransferEndpoint(provider: source, path: "/first.bin"),
                                                       to: TransferEndpoint(provider: dav, path: folder + "/first.bin"))
        #expect(summary.copied == 1)
        #expect(records.messages.contains("server ignores Content-Range on PUT; large files go in one request"), "\(records.messages)")
        // The probe, its size check, its removal, then the file in one PUT and the rename.
        let puts = records.httpRequests.filter { $0.hasPrefix("PUT ") }
        #expect(puts.count == 2, "requests: \(records.httpRequests)")
        #expect(try await dav.contents(path: folder + "/first.bin") == first)

        records.clear()
        summary = try await engine(streams: 4).run(.copy, from: TransferEndpoint(provider: source, path: "/second.bin"),
                                                   to: TransferEndpoint(provider: dav, path: folder + "/second.bin"))
        #expect(summary.copied == 1)
        #expect(records.httpRequests.filter { $0.hasPrefix("PUT ") }.count == 1, "requests: \(records.httpRequests)")
        #expect(try await dav.contents(path: folder + "/second.bin") == second)
        #expect(try await dav.contentsOfDirectory(path: folder).collectAll().map(\.name).sorted() == ["first.bin", "second.bin"])
    }

    @Test("a ranged upload is committed only when every range arrived; a short range or an abort leaves no temporary")
    func rangedUploadRefusesGaps() async throws {
        try await ProviderFixture.webdavApache.run { scratch in
            let dav = try #require(scratch.provider as? WebDAVProvider)
            let size: Int64 = 3 << 20
            var options = WriteOptions()
            options.returnsStoredAttributes = false
            let file = try #require(try await dav.openSegmentedWrite(path: scratch.path("gap.bin"), size: size, options: options))
            let piece = Bytes.pattern(1 << 20, seed: 27)
            try await file.write(offset: 0, length: 1 << 20, from: ByteStream(data: piece))
            // A source that ends early fails its range.
            await expectFailure(.connectionLost) {
                try await file.write(offset: 1 << 20, length: 1 << 20, from: ByteStream(data: piece.prefix(1000)))
            }
            // The probe gave the server's file its full size already; the missing ranges still count.
            await #expect(throws: FileProviderError.self) { _ = try await file.commit() }
            await file.abort()
            #expect(try await dav.itemIfPresent(path: scratch.path("gap.bin")) == nil)
            #expect(try await dav.contentsOfDirectory(path: scratch.base).collectAll().isEmpty)
        }
    }

    @Test("an upload cut mid-range fails the file: nothing under the final name, no temporary left")
    func cutRangedUpload() async throws {
        let (local, source) = try localSource(["big.bin": Bytes.pattern(6_000_000, seed: 28)])
        defer { local.remove() }
        let (direct, folder) = try await ApacheFixtures.serverFile(Data())
        defer { Task { try? await direct.removeItem(path: folder, recursive: true) } }
        let (proxiedDAV, proxy) = try ApacheFixtures.proxied(dropAfter: 800_000, maxDrops: 100)
        defer { proxy.stop() }
        let events = EventLog()
        let summary = try await engine(streams: 4, retries: 1).run(
            .copy, from: TransferEndpoint(provider: source, path: "/big.bin"),
            to: TransferEndpoint(provider: proxiedDAV, path: folder + "/up.bin"), onEvent: events.record)
        #expect(summary.failed == 1)
        #expect(proxy.drops >= 1)
        #expect(events.failures.first.map { $0.failureKind.isTransient } == true, "\(events.failures)")
        #expect(try await direct.contentsOfDirectory(path: folder).collectAll().map(\.name) == ["big.bin"])
        // It was a ranged upload: the probe reached the server.
        let puts = try await ApacheAccessLog.requests("PUT", containing: String(folder.dropFirst()) + "/.up.bin.")
        #expect(puts.contains { $0.contains(" bytes 5999999-5999999/6000000") }, "PUTs: \(puts)")
    }

    @Test("into a missing WebDAV folder, a large copy fails as a plain write does, leaving nothing")
    func rangedUploadIntoMissingFolder() async throws {
        let (local, provider) = try localSource(["big.bin": Bytes.pattern(3_000_000, seed: 33)])
        defer { local.remove() }
        try await ProviderFixture.webdavApache.run { (to: ProviderScratch) async throws in
            var options = TransferOptions()
            options.multiThreadStreams = 4
            options.multiThreadCutoff = 1 << 20
            let source = TransferEndpoint(provider: provider, path: "/big.bin")
            var ranged: (any Error)?
            do {
                try await Transfer.copyFile(from: source, to: TransferEndpoint(provider: to.provider, path: to.path("missing/big.bin")),
                                            options: options)
            } catch {
                ranged = error
            }
            var plain: (any Error)?
            do {
                try await to.provider.writeContents(path: to.path("missing/small.bin"), data: Data("x".utf8))
            } catch {
                plain = error
            }
            #expect(ranged != nil && plain != nil)
            #expect(ranged?.failureKind == plain?.failureKind, "ranged: \(String(describing: ranged)), plain: \(String(describing: plain))")
            #expect(try await to.provider.contentsOfDirectory(path: to.base).collectAll().isEmpty)
        }
    }

    @Test("cancelling a ranged upload mid-range removes the temporary promptly")
    func cancelRangedUpload() async throws {
        let (local, provider) = try localSource(["big.bin": Bytes.pattern(40_000_000, seed: 31)])
        defer { local.remove() }
        try await ProviderFixture.webdavApache.run { to in
            let progress = TransferProgress()
            let source = TransferEndpoint(provider: provider, path: "/big.bin")
            let destination = TransferEndpoint(provider: to.provider, path: to.path("big.bin"))
            let engine = engine(streams: 4)
            let task = Task { try await engine.run(.copy, from: source, to: destination, progress: progress) }
            while progress.snapshot.completedBytes < 2_000_000 { try await Task.sleep(for: .milliseconds(2)) }
            let cancelled = ContinuousClock.now
            task.cancel()
            _ = await task.result
            #expect(ContinuousClock.now - cancelled < .seconds(5))
            #expect(try await to.provider.contentsOfDirectory(path: to.base).collectAll().isEmpty)
            let puts = try await ApacheAccessLog.requests("PUT", containing: String(to.base.dropFirst()) + "/.big.bin.")
            #expect(puts.contains { $0.contains(" bytes 39999999-39999999/40000000") }, "it was a ranged upload: \(puts)")
        }
    }

    /// A temporary local folder holding `files`, and a Local provider rooted at it (the caller
    /// removes the folder).
    func localSource(_ files: [String: Data]) throws -> (folder: TemporaryFolder, provider: LocalFileProvider) {
        let folder = try TemporaryFolder.make()
        for (name, data) in files { try data.write(to: URL(fileURLWithPath: folder.path + "/" + name)) }
        return (folder, try LocalFileProvider(name: "l", root: folder.path))
    }

    /// A provider on a ``RangeLosingDAVServer``, logging to `records`.
    func rangeLosing(_ mode: RangeLosingDAVServer.Mode, records: LogRecords) throws -> (RangeLosingDAVServer, WebDAVProvider) {
        let server = try RangeLosingDAVServer(mode: mode)
        let configuration = HTTPClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(server.port)/")!, remoteName: "lossy",
                                                    connectTimeout: .seconds(5), idleTimeout: .seconds(15))
        return (server, WebDAVProvider(configuration: configuration, logger: records.logger(label: "test.dav")))
    }

    @Test("a server that takes the probe but loses ranges sent at once: the read-back catches it, the retry sends one PUT")
    func lostRangesAreCaught() async throws {
        let records = LogRecords()
        let (server, dav) = try rangeLosing(.copyModifyRename, records: records)
        defer { server.stop() }
        let data = Bytes.pattern(3_000_000, seed: 29)
        let (local, source) = try localSource(["big.bin": data])
        defer { local.remove() }
        let events = EventLog()
        let summary = try await engine(streams: 3).run(
            .copy, from: TransferEndpoint(provider: source, path: "/big.bin"),
            to: TransferEndpoint(provider: dav, path: "/big.bin"), onEvent: events.record)
        #expect(summary.copied == 1)
        #expect(events.retries == 1, "one failed ranged attempt, then one plain PUT")
        #expect(records.messages.contains("server did not keep the ranges of a PUT as sent; large files go in one request"),
                "\(records.messages)")
        #expect(server.file("/big.bin") == data)
        #expect(server.paths == ["/big.bin"], "no temporary left")
        let puts = server.requests.filter { $0.hasPrefix("PUT ") }
        #expect(puts.filter { $0.hasSuffix(" -") }.count == 1, "one plain PUT: \(puts)")
        #expect(puts.count == 5, "the probe, 3 ranges, the plain PUT: \(puts)")
    }

    @Test("a server that answers 501 to a ranged PUT: the file goes in one PUT, and the next file sends no probe")
    func refusedRanges() async throws {
        let records = LogRecords()
        let (server, dav) = try rangeLosing(.refuse, records: records)
        defer { server.stop() }
        let data = Bytes.pattern(2_500_000, seed: 30)
        let (local, source) = try localSource(["a.bin": data, "b.bin": data])
        defer { local.remove() }
        for name in ["a.bin", "b.bin"] {
            let summary = try await engine(streams: 4).run(.copy, from: TransferEndpoint(provider: source, path: "/" + name),
                                                           to: TransferEndpoint(provider: dav, path: "/" + name))
            #expect(summary.copied == 1)
            #expect(server.file("/" + name) == data)
        }
        #expect(records.messages.contains("server refuses Content-Range on PUT; large files go in one request"), "\(records.messages)")
        let puts = server.requests.filter { $0.hasPrefix("PUT ") }
        #expect(puts.count == 3, "a probe, then one plain PUT per file: \(puts)")
        #expect(puts.filter { $0.hasSuffix(" -") }.count == 2, "\(puts)")
        #expect(server.paths == ["/a.bin", "/b.bin"])
    }
}
