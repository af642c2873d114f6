import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// A server connection cut mid-transfer (a proxy in front of Apache): the engine retries, nothing
/// truncated appears under a final name, and the result is byte-equal.
@Suite("Faults: connections cut mid-transfer", .serialized)
struct FaultTests {
    @Test("upload cut once: retried, byte-equal, no temporary left")
    func uploadCut() async throws {
        let local = try TemporaryFolder.make()
        defer { local.remove() }
        let data = Bytes.pattern(6_000_000, seed: 11)
        try FileManager.default.createDirectory(atPath: local.path + "/src", withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: local.path + "/src/big.bin"))
        let (dav, proxy) = try ApacheFixtures.proxied(dropAfter: 2_000_000, maxDrops: 1)
        defer { proxy.stop() }
        let folder = "/fault-\(UUID().uuidString.prefix(8))"
        defer { Task { try? await dav.removeItem(path: folder, recursive: true) } }
        let events = EventLog()
        let summary = try await CopyEngine(options: CopyOptions(retryDelay: .milliseconds(50))).run(
            .copy, from: TransferEndpoint(provider: try LocalFileProvider(name: "l", root: local.path), path: "/src"),
            to: TransferEndpoint(provider: dav, path: folder), onEvent: events.record)
        #expect(proxy.drops == 1, "the proxy must have cut the transfer")
        #expect(summary.failed == 0)
        #expect(summary.copied == 1)
        #expect(events.retries >= 1)
        #expect(try await dav.contents(path: folder + "/big.bin") == data)
        let names = try await dav.contentsOfDirectory(path: folder).collectAll().map(\.name)
        #expect(names == ["big.bin"], "left: \(names)")
    }

    @Test("download cut every time: fails clearly, nothing under the final name; a re-run resumes where it stopped")
    func downloadCutThenRerun() async throws {
        let local = try TemporaryFolder.make()
        defer { local.remove() }
        let data = Bytes.pattern(5_000_000, seed: 12)
        // The same remote name as the proxied one: a re-run names the source as the first run did.
        let (direct, folder) = try await ApacheFixtures.serverFile(data)
        defer { Task { try? await direct.removeItem(path: folder, recursive: true) } }

        let (dav, proxy) = try ApacheFixtures.proxied(dropAfter: 1_500_000, maxDrops: 100)
        defer { proxy.stop() }
        let localProvider = try LocalFileProvider(name: "l", root: local.path)
        let engine = CopyEngine(options: CopyOptions(retries: 2, retryDelay: .milliseconds(20)))
        let failing = EventLog()
        let summary = try await engine.run(.copy, from: TransferEndpoint(provider: dav, path: folder),
                                           to: TransferEndpoint(provider: localProvider, path: "/dst"), onEvent: failing.record)
        #expect(summary.failed == 1)
        #expect(proxy.drops >= 2)
        #expect(failing.failures.first.map { $0.failureKind == .connectionLost || $0.failureKind == .timedOut } == true)
        // Nothing under the final name: only the hidden partial file, kept for resuming, with what arrived.
        let left = (try? FileManager.default.contentsOfDirectory(atPath: local.path + "/dst")) ?? []
        #expect(left.count == 1 && left[0].hasPrefix(".big.bin.gateway-resume-") && left[0].hasSuffix(".partial"), "left: \(left)")
        let kept = try Data(contentsOf: URL(fileURLWithPath: local.path + "/dst/" + left[0]))
        // Two attempts of at most 1.5 MB each (a reset also discards what the client had not read yet).
        #expect(kept.count > 0 && kept.count < data.count, "kept \(kept.count) bytes; events: \(failing.all)")
        #expect(kept == data.prefix(kept.count))

        let again = try await engine.run(.copy, from: TransferEndpoint(provider: direct, path: folder),
                                         to: TransferEndpoint(provider: localProvider, path: "/dst"))
        #expect(again.failed == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: local.path + "/dst/big.bin")) == data)
        #expect(try FileManager.default.contentsOfDirectory(atPath: local.path + "/dst") == ["big.bin"])
        // The re-run asked only for the rest (a 206 partial answer to a ranged GET).
        let gets = try await ApacheAccessLog.requests("GET", containing: String(folder.dropFirst()) + "/big.bin")
        #expect(gets.last?.contains(" 206 ") == true, "GETs: \(gets)")
    }

    @Test("a download cut every 1.5 MB still completes: each retry continues where the last one stopped")
    func downloadResumesWithinRun() async throws {
        let local = try TemporaryFolder.make()
        defer { local.remove() }
        let data = Bytes.pattern(5_000_000, seed: 13)
        let (direct, folder) = try await ApacheFixtures.serverFile(data)
        defer { Task { try? await direct.removeItem(path: folder, recursive: true) } }

        let (dav, proxy) = try ApacheFixtures.proxied(dropAfter: 1_500_000, maxDrops: 100)
        defer { proxy.stop() }
        let events = EventLog()
        // Each cut is a reset, which also discards what was still in the client's socket buffer, so
        // an attempt gains at most 1.5 MB (less on a busy machine): allow plenty of attempts.
        let summary = try await CopyEngine(options: CopyOptions(retries: 40, retryDelay: .milliseconds(5), maxRetryDelay: .milliseconds(20))).run(
            .copy, from: TransferEndpoint(provider: dav, path: folder + "/big.bin"),
            to: TransferEndpoint(provider: try LocalFileProvider(name: "l", root: local.path), path: "/big.bin"), onEvent: events.record)
        #expect(summary.failed == 0, "failures: \(events.failures)")
        #expect(events.retries >= 3, "5 MB through connections cut after 1.5 MB needs at least 4 attempts")
        #expect(try Data(contentsOf: URL(fileURLWithPath: local.path + "/big.bin")) == data)
        #expect(try FileManager.default.contentsOfDirectory(atPath: local.path) == ["big.bin"])
        // Every attempt after the first asked for the rest only: one whole GET (200), and ranged GETs
        // answered 206. Counted, not read in order: Apache logs a request when it ends, and the cut
        // first one can end after a retry did.
        let gets = try await ApacheAccessLog.requests("GET", containing: String(folder.dropFirst()) + "/big.bin")
        #expect(gets.count == events.retries + 1, "GETs: \(gets)")
        #expect(gets.filter { $0.contains(" 200 ") }.count == 1, "GETs: \(gets)")
        #expect(gets.filter { $0.contains(" 206 ") }.count == events.retries, "GETs: \(gets)")
    }
}

extension EventLog {
    var retries: Int { all.filter { if case .retrying = $0 { true } else { false } }.count }
    var failures: [any Error] { all.compactMap { if case .failed(_, _, _, _, let error) = $0 { error } else { nil } } }
}
