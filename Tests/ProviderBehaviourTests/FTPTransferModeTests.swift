import Foundation
import StorageGateway
import Testing

/// FTP transfers beyond the behaviour suite: uploads that continue with `APPE` after an
/// interruption, and active mode (`PORT`/`EPRT`), on vsftpd and pyftpdlib.
@Suite("FTP resumed uploads and active mode")
struct FTPTransferModeTests {
    /// A stream that delivers `prefix` in 64 KiB chunks, gives the bytes a moment to reach the
    /// server, then fails as a dropped connection does.
    static func interrupted(_ prefix: Data, announcing length: Int) -> ByteStream {
        let chunks = ByteStream(data: prefix, chunkSize: 64 * 1024)
        let box = ChunkBox(chunks.makeAsyncIterator())
        return ByteStream(expectedLength: Int64(length)) {
            if let chunk = try await box.next() { return chunk }
            try await Task.sleep(for: .milliseconds(300))
            throw URLError(.networkConnectionLost)
        }
    }

    @Test("an interrupted upload keeps its partial file; the next one continues with APPE", arguments: [ProviderFixture.ftpVsftpd, .ftpPyftpdlib])
    func resumedUpload(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            let ftp = try #require(s.provider as? any FileProviderResumableWrite)
            let data = Bytes.pattern(3_000_000, seed: 31)
            let key = "k" + UUID().uuidString.prefix(8).lowercased()
            let options = WriteOptions(expectedSize: Int64(data.count))
            await expectFailure(.connectionLost) {
                _ = try await ftp.resumableWrite(path: s.path("up.bin"), key: key, offset: 0,
                                                 from: Self.interrupted(data.prefix(1_200_000), announcing: data.count), options: options)
            }
            let kept = try await ftp.resumableWriteLength(path: s.path("up.bin"), key: key)
            #expect(kept > 0 && kept <= 1_200_000, "kept \(kept)")
            await expectFailure(.notFound) { _ = try await s.provider.attributesOfItem(path: s.path("up.bin")) }
            #expect(try await ftp.resumableWriteLength(path: s.path("up.bin"), key: "other") == 0)

            let rest = ByteStream(data: data.subdata(in: Int(kept)..<data.count))
            let stored = try await ftp.resumableWrite(path: s.path("up.bin"), key: key, offset: kept, from: rest, options: options)
            #expect(stored.size == Int64(data.count))
            #expect(try await s.provider.contents(path: s.path("up.bin")) == data)
            #expect(try await ftp.resumableWriteLength(path: s.path("up.bin"), key: key) == 0)
            #expect(try await s.provider.contentsOfDirectory(path: s.base).collectAll().map(\.name) == ["up.bin"])

            // An offset that does not match what the server holds is refused before anything is sent.
            await expectFailure(.connectionLost) {
                _ = try await ftp.resumableWrite(path: s.path("again.bin"), key: key, offset: 10, from: ByteStream(data: Data("x".utf8)), options: options)
            }
        }
    }

    @Test("active mode: the server connects back (EPRT/PORT) for listings, uploads and downloads", arguments: [
        ("GATEWAY_TEST_FTP_VSFTPD_URL", "GATEWAY_TEST_FTP_VSFTPD_USER"), ("GATEWAY_TEST_FTP_PYFTPDLIB_URL", "GATEWAY_TEST_FTP_PYFTPDLIB_USER"),
    ])
    func activeMode(url: String, user: String) async throws {
        var configuration = try TestServers.ftp(urlVariable: url, userVariable: user, remoteName: "active")
        configuration.passive = false
        let ftp = FTPProvider(configuration: configuration)
        let folder = "/active-\(UUID().uuidString.prefix(8))"
        try await ftp.createFolder(path: folder, withIntermediateDirectories: false)
        let data = Bytes.pattern(300_000, seed: 32)
        try await ftp.writeContents(path: folder + "/a.bin", data: data)
        #expect(try await ftp.contentsOfDirectory(path: folder).collectAll().map(\.name) == ["a.bin"])
        #expect(try await ftp.contents(path: folder + "/a.bin") == data)
        #expect(try await ftp.contents(path: folder + "/a.bin", offset: 1000, length: 10) == data.subdata(in: 1000..<1010))
        try await ftp.removeItem(path: folder, recursive: true)
    }
}

/// Holds an iterator for the one consumer of a test stream.
private final class ChunkBox: @unchecked Sendable {
    private var iterator: ByteStream.AsyncIterator
    init(_ iterator: ByteStream.AsyncIterator) { self.iterator = iterator }
    func next() async throws -> Data? { try await iterator.next() }
}
