import Foundation
import GatewayTestSupport
import StorageGateway
import Testing

/// `--multi-thread-streams`: a large file downloaded in several ranged streams at once, each piece
/// written at its offset into a local file that appears under its name only when complete.
@Suite("Multi-stream downloads", .serialized)
struct MultiStreamTests {
    func engine(streams: Int, retries: Int = 3) -> CopyEngine {
        var options = CopyOptions(retries: retries, retryDelay: .milliseconds(10))
        options.multiThreadStreams = streams
        options.multiThreadCutoff = 1 << 20
        return CopyEngine(options: options)
    }

    @Test("WebDAV to Local in 4 ranged streams: byte-equal, one ranged GET per stream, nothing else left")
    func webdavToLocal() async throws {
        let data = Bytes.pattern(6_500_000, seed: 21)
        try await ProviderFixture.webdavApache.run { from in
            try await ProviderFixture.local.run { to in
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
}
