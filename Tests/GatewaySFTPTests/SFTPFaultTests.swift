import Foundation
@testable import GatewaySFTP
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// SFTP connections cut mid-transfer (a proxy in front of OpenSSH's sshd that resets the TCP
/// connection after some bytes): the upload keeps what arrived and continues from there, the
/// copy engine's retry finishes it byte-equal, and nothing is left beside the file.
@Suite("SFTP: connections cut mid-transfer", .serialized)
struct SFTPFaultTests {
    /// OpenSSH's server behind a proxy that cuts the first `maxDrops` connections after `dropAfter`
    /// bytes; the host key trusted by its fingerprint (the proxy's port is in no known_hosts).
    static func proxied(dropAfter: Int, maxDrops: Int) throws -> (SFTPProvider, DroppingProxy) {
        guard let port = Int(try TestServers.sftpValue(.openssh, "PORT")),
              let password = ProcessInfo.processInfo.environment["GATEWAY_TEST_SFTP_PASSWORD"] else {
            throw TestServers.Missing(variable: "GATEWAY_TEST_SFTP_OPENSSH_PORT")
        }
        let proxy = try DroppingProxy(targetPort: port, dropAfter: dropAfter, maxDrops: maxDrops)
        var configuration = try TestServers.sftp(.openssh, remoteName: "cut")
        configuration.port = proxy.port
        configuration.channel = .inProcess(credentials: [.password(password)],
                                           hostKeys: HostKeyPolicy(knownHostsFiles: [], fingerprint: try TestServers.sftpValue(.openssh, "FINGERPRINT")))
        return (SFTPProvider(configuration: configuration), proxy)
    }

    @Test("a resumable upload cut after 2 MB keeps what arrived; the next attempt sends only the rest")
    func resumeAfterCut() async throws {
        let data = Bytes.pattern(6_000_000, seed: 21)
        // No cut by count: the proxy stops passing the upload after 2 MB, and the test cuts the
        // connection once the server holds some of it. (A reset at a byte count can arrive
        // before sshd has read what came before it; the kernel then drops those bytes, and what
        // is kept depends on the machine's load.)
        let (provider, proxy) = try Self.proxied(dropAfter: Int.max / 2, maxDrops: 0)
        defer { proxy.stop(); Task { await provider.shutdown() } }
        proxy.setHolding(after: 2_000_000)
        let direct = SFTPProvider(configuration: try TestServers.sftp(.openssh, remoteName: "direct"))
        defer { Task { await direct.shutdown() } }
        let folder = "/cut-\(UUID().uuidString.prefix(8))"
        try await direct.createFolder(path: folder, withIntermediateDirectories: false)
        defer { Task { try? await direct.removeItem(path: folder, recursive: true) } }
        let target = folder + "/big.bin"
        let partial = RemotePath.resumablePath(for: target, key: "k1")

        let upload = Task {
            try await provider.resumableWrite(path: target, key: "k1", offset: 0, from: ByteStream(data: data, chunkSize: 64 << 10),
                                              options: WriteOptions(expectedSize: Int64(data.count)))
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while ((try? await direct.itemIfPresent(path: partial))?.size ?? 0) == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        proxy.cutAll()
        proxy.setHolding(after: nil)
        do {
            _ = try await upload.value
            Issue.record("the cut must have failed the upload")
        } catch {
            #expect(error.failureKind == .connectionLost, "got \(error)")
        }
        let kept = try await provider.resumableWriteLength(path: target, key: "k1")
        #expect(kept > 0 && kept <= 2_000_000, "kept \(kept)")
        #expect(try await direct.contents(path: partial) == data.prefix(Int(kept)))
        #expect(try await direct.itemIfPresent(path: target) == nil, "nothing under the final name")

        let rest = data.subdata(in: Int(kept)..<data.count)
        _ = try await provider.resumableWrite(path: target, key: "k1", offset: kept, from: ByteStream(data: rest),
                                              options: WriteOptions(expectedSize: Int64(data.count)))
        #expect(try await direct.contents(path: target) == data)
        #expect(try await direct.contentsOfDirectory(path: folder).collectAll().map(\.name) == ["big.bin"])
    }

    @Test("a copy whose upload is cut once is retried by the engine: byte-equal, nothing left beside it")
    func copyRetried() async throws {
        let local = try TemporaryFolder.make()
        defer { local.remove() }
        let data = Bytes.pattern(5_000_000, seed: 22)
        try FileManager.default.createDirectory(atPath: local.path + "/src", withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: local.path + "/src/big.bin"))
        let (provider, proxy) = try Self.proxied(dropAfter: 1_500_000, maxDrops: 1)
        defer { proxy.stop(); Task { await provider.shutdown() } }
        let folder = "/copy-cut-\(UUID().uuidString.prefix(8))"
        defer { Task { try? await provider.removeItem(path: folder, recursive: true) } }
        let summary = try await CopyEngine(options: CopyOptions(retryDelay: .milliseconds(50))).run(
            .copy, from: TransferEndpoint(provider: try LocalFileProvider(name: "l", root: local.path), path: "/src"),
            to: TransferEndpoint(provider: provider, path: folder))
        #expect(proxy.drops == 1, "the proxy must have cut the transfer")
        #expect(summary.failed == 0)
        #expect(summary.copied == 1)
        #expect(try await provider.contents(path: folder + "/big.bin") == data)
        #expect(try await provider.contentsOfDirectory(path: folder).collectAll().map(\.name) == ["big.bin"])
    }

    @Test("a server that cannot write into a file at an offset (rclone) starts over, its partial file rewritten; OpenSSH continues")
    func resumeProbe() async throws {
        for (server, resumes) in [(TestServers.SFTPServer.openssh, true), (.rclone, false)] {
            let provider = SFTPProvider(configuration: try TestServers.sftp(server, remoteName: "probe"))
            defer { Task { await provider.shutdown() } }
            let target = "/probe-\(UUID().uuidString.prefix(8)).bin"
            let partial = RemotePath.resumablePath(for: target, key: "k2")
            try await provider.writeContents(path: partial, data: Data("0123456789".utf8))
            let length = try await provider.resumableWriteLength(path: target, key: "k2")
            #expect(length == (resumes ? 10 : 0), "\(server)")
            #expect(try await provider.contents(path: partial) == Data("0123456789".utf8), "\(server): the probe changes nothing")
            _ = try await provider.resumableWrite(path: target, key: "k2", offset: length,
                                                  from: ByteStream(data: Data("0123456789abc".utf8).subdata(in: Int(length)..<13)),
                                                  options: WriteOptions(expectedSize: 13))
            #expect(try await provider.contents(path: target) == Data("0123456789abc".utf8), "\(server)")
            #expect(try await provider.itemIfPresent(path: partial) == nil, "\(server): the partial file became the file")
            try await provider.removeItem(path: target, recursive: false)
        }
    }
}
