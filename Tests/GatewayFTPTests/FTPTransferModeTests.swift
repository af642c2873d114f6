import Foundation
@testable import GatewayTestSupport
import Logging
import StorageGateway
import Testing

/// FTP transfers beyond the behaviour suite: uploads that continue with `APPE` after an
/// interruption, active mode (`PORT`/`EPRT`), and pooled connections whose folder another client
/// removed, on vsftpd and pyftpdlib.
@Suite("FTP resumed uploads and active mode")
struct FTPTransferModeTests {
    /// A stream that delivers `prefix` in 64 KiB chunks, waits until the server keeps some of
    /// them (`kept` says how much: the partial file seen from outside), then fails as a dropped
    /// connection does.
    static func interrupted(_ prefix: Data, announcing length: Int, kept: @escaping @Sendable () async -> Int64) -> ByteStream {
        let chunks = ByteStream(data: prefix, chunkSize: 64 * 1024)
        let box = ChunkBox(chunks.makeAsyncIterator())
        return ByteStream(expectedLength: Int64(length)) {
            if let chunk = try await box.next() { return chunk }
            let deadline = ContinuousClock.now + .seconds(30)
            while await kept() == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
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
                                                 from: Self.interrupted(data.prefix(1_200_000), announcing: data.count) {
                                                     (try? await ftp.resumableWriteLength(path: s.path("up.bin"), key: key)) ?? 0
                                                 }, options: options)
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

    @Test("a server that will not rename onto an existing file (as IIS): the old file goes first; contents and time are the new ones")
    func renameOntoExistingRefused() async throws {
        try await ProviderFixture.ftpPyftpdlib.run { s in
            let path = s.path("notes refuses-replace.txt")
            let first = Date(timeIntervalSince1970: 1_600_000_000), second = Date(timeIntervalSince1970: 1_700_000_000)
            // Small files (the rename and MFMT ride on the upload's connection), then a large one (its own rename).
            for (index, (size, date)) in [(4096, first), (5000, second), (1_500_000, first)].enumerated() {
                let data = Bytes.pattern(size, seed: UInt64(40 + index))
                _ = try await s.provider.write(path: path, from: ByteStream(data: data),
                                               options: WriteOptions(overwrite: true, atomically: true, modificationDate: date))
                #expect(try await s.provider.contents(path: path) == data, "write \(index + 1)")
                #expect(try await s.provider.attributesOfItem(path: path).modificationDate == date, "write \(index + 1)")
                #expect(try await s.provider.contentsOfDirectory(path: s.base).collectAll().map(\.name) == ["notes refuses-replace.txt"],
                        "no temporary file is left")
            }
        }
    }

    @Test("routine refusals keep the connection: stat of missing names (refused MLST) logs in once")
    func refusalsKeepTheConnection() async throws {
        let configuration = try TestServers.ftp(urlVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_URL", userVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_USER",
                                                remoteName: "keeps")
        let records = LogRecords()
        let ftp = FTPProvider(configuration: configuration, logger: records.logger(label: "test.ftp"))
        #expect(try await ftp.itemIfPresent(path: "/") != nil)
        let connects = records.messages.filter { $0 == "ftp connected" }.count
        #expect(connects == 1, "\(records.messages)")
        for index in 0..<3 {
            #expect(try await ftp.itemIfPresent(path: "/no-such-file-\(index)-\(UUID().uuidString.prefix(8))") == nil)
        }
        #expect(records.requests.filter { $0 == "MLST" }.count >= 3, "\(records.requests)")
        #expect(records.messages.filter { $0 == "ftp connected" }.count == connects, "a refusal cost a new connection: \(records.messages)")
    }

    @Test("a small upload is one request: MFMT and the rename follow STOR on its connection; a large one renames apart")
    func smallUploadInOneRequest() async throws {
        let configuration = try TestServers.ftp(urlVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_URL", userVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_USER",
                                                remoteName: "one-request")
        let records = LogRecords()
        var logger = Logger(label: "test.ftp") { _ in RecordingLogHandler(records: records) }
        logger.logLevel = .debug
        let ftp = FTPProvider(configuration: configuration, logger: logger)
        let folder = "/one-request-\(UUID().uuidString.prefix(8))"
        try await ftp.createFolder(path: folder, withIntermediateDirectories: false)
        defer { Task { try? await ftp.removeItem(path: folder, recursive: true) } }
        let date = Date(timeIntervalSince1970: 1_650_000_000)
        var options = WriteOptions(overwrite: true, atomically: true, modificationDate: date)
        options.returnsStoredAttributes = false  // as the copy engine writes

        records.clear()
        let small = Bytes.pattern(4096, seed: 71)
        _ = try await ftp.write(path: folder + "/small.bin", from: ByteStream(data: small), options: options)
        #expect(records.requests == ["STOR"], "requests: \(records.requests)")
        #expect(try await ftp.contents(path: folder + "/small.bin") == small)
        #expect(try await ftp.attributesOfItem(path: folder + "/small.bin").modificationDate == date)

        records.clear()
        let large = Bytes.pattern(1_500_000, seed: 72)
        _ = try await ftp.write(path: folder + "/large.bin", from: ByteStream(data: large), options: options)
        #expect(records.requests == ["STOR", "RNTO", "MFMT"], "requests: \(records.requests)")
        #expect(try await ftp.contents(path: folder + "/large.bin") == large)
        #expect(try await ftp.contentsOfDirectory(path: folder).collectAll().map(\.name).sorted() == ["large.bin", "small.bin"])
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

    /// libcurl skips the `CWD` into a folder its pooled connection was in for the previous
    /// transfer. Without a `CWD` of our own, a folder another client had just removed listed as
    /// empty on vsftpd (LIST in a removed working folder), and passed for existing in a stat.
    @Test("a folder removed by another client is gone for a connection that was last inside it", arguments: [
        ("GATEWAY_TEST_FTP_VSFTPD_URL", "GATEWAY_TEST_FTP_VSFTPD_USER"), ("GATEWAY_TEST_FTP_PYFTPDLIB_URL", "GATEWAY_TEST_FTP_PYFTPDLIB_USER"),
    ])
    func folderRemovedElsewhere(url: String, user: String) async throws {
        var configuration = try TestServers.ftp(urlVariable: url, userVariable: user, remoteName: "one-connection")
        configuration.maxConnections = 1
        let ftp = FTPProvider(configuration: configuration)
        let other = FTPProvider(configuration: try TestServers.ftp(urlVariable: url, userVariable: user, remoteName: "other"))
        let folder = "/gone-\(UUID().uuidString.prefix(8))"
        // A second remote whose root is the folder: its stat of "/" is a bare CWD.
        var scopedConfiguration = configuration
        scopedConfiguration.baseURL = configuration.baseURL.appendingPathComponent(String(folder.dropFirst()) + "/inner", isDirectory: true)
        let scoped = FTPProvider(configuration: scopedConfiguration)
        for name in ["inner", "inner2"] {
            try await ftp.createFolder(path: folder + "/" + name, withIntermediateDirectories: true)
            try await ftp.writeContents(path: folder + "/" + name + "/f.txt", data: Data("f".utf8))
        }
        #expect(try await ftp.contentsOfDirectory(path: folder + "/inner2").collectAll().map(\.name) == ["f.txt"])
        #expect(try await scoped.contentsOfDirectory(path: "/").collectAll().map(\.name) == ["f.txt"])

        try await other.removeItem(path: folder + "/inner", recursive: true)
        try await other.removeItem(path: folder + "/inner2", recursive: true)
        await expectFailure(.notFound) { _ = try await scoped.attributesOfItem(path: "/") }
        await expectFailure(.notFound) { _ = try await ftp.contentsOfDirectory(path: folder + "/inner2").collectAll() }
        await expectFailure(.notFound) { _ = try await ftp.attributesOfItem(path: folder + "/inner2") }
        try await ftp.removeItem(path: folder, recursive: true)
    }

    @Test("a base folder that does not exist fails at login, and nothing makes it", arguments: [
        ("GATEWAY_TEST_FTP_VSFTPD_URL", "GATEWAY_TEST_FTP_VSFTPD_USER"), ("GATEWAY_TEST_FTP_PYFTPDLIB_URL", "GATEWAY_TEST_FTP_PYFTPDLIB_USER"),
    ])
    func missingBaseFolder(url: String, user: String) async throws {
        let other = FTPProvider(configuration: try TestServers.ftp(urlVariable: url, userVariable: user, remoteName: "other"))
        let name = "no-base-\(UUID().uuidString.prefix(8))"
        var configuration = try TestServers.ftp(urlVariable: url, userVariable: user, remoteName: "missing-base")
        configuration.baseURL = configuration.baseURL.appendingPathComponent(name, isDirectory: true)
        let ftp = FTPProvider(configuration: configuration)
        for operation in ["list", "mkdir", "write"] {
            do {
                switch operation {
                case "list": _ = try await ftp.contentsOfDirectory(path: "/").collectAll()
                case "mkdir": try await ftp.createFolder(path: "/made/deeper", withIntermediateDirectories: true)
                default: try await ftp.writeContents(path: "/file.txt", data: Data("x".utf8))
                }
                Issue.record("\(operation) under a missing base folder succeeded")
            } catch {
                #expect(error.failureKind == .notFound, "\(operation): \(error)")
            }
        }
        #expect(try await other.itemIfPresent(path: "/" + name) == nil, "the base folder was made")
    }

    /// A pooled connection stays in the folder it last entered, and the server follows that folder
    /// when another client renames it. Commands naming files relative to it (libcurl's single-`CWD`
    /// method, whose `CWD` is skipped when the previous transfer was in the same folder) then found,
    /// read and wrote files in the renamed folder: seen as `serve webdav` over vsftpd answering a
    /// litmus `COPY` with 412, because `SIZE` found the source's file under the destination's name.
    @Test("a folder another client renamed and replaced: a connection last inside it stats, reads and writes the new one", arguments: [
        ("GATEWAY_TEST_FTP_VSFTPD_URL", "GATEWAY_TEST_FTP_VSFTPD_USER"), ("GATEWAY_TEST_FTP_PYFTPDLIB_URL", "GATEWAY_TEST_FTP_PYFTPDLIB_USER"),
    ])
    func folderRenamedElsewhere(url: String, user: String) async throws {
        var configuration = try TestServers.ftp(urlVariable: url, userVariable: user, remoteName: "one-connection")
        configuration.maxConnections = 1
        let ftp = FTPProvider(configuration: configuration)
        let other = FTPProvider(configuration: try TestServers.ftp(urlVariable: url, userVariable: user, remoteName: "other"))
        let folder = "/renamed-\(UUID().uuidString.prefix(8))"
        try await ftp.createFolder(path: folder + "/a", withIntermediateDirectories: true)
        try await ftp.writeContents(path: folder + "/a/old.txt", data: Data("old".utf8))
        // The one connection enters a (a listing always does) and stays there.
        #expect(try await ftp.contentsOfDirectory(path: folder + "/a").collectAll().map(\.name) == ["old.txt"])
        #expect(try await ftp.contents(path: folder + "/a/old.txt") == Data("old".utf8))

        try await other.moveItem(path: folder + "/a", to: folder + "/b", overwrite: false)
        try await other.createFolder(path: folder + "/a", withIntermediateDirectories: false)
        try await other.writeContents(path: folder + "/a/new.txt", data: Data("new".utf8))

        #expect(try await ftp.itemIfPresent(path: folder + "/a/old.txt") == nil, "found in the renamed folder")
        #expect(try await ftp.attributesOfItem(path: folder + "/a/new.txt").size == 3)
        #expect(try await ftp.contents(path: folder + "/a/new.txt") == Data("new".utf8))
        try await ftp.writeContents(path: folder + "/a/written.txt", data: Data("written".utf8))
        #expect(try await other.contentsOfDirectory(path: folder + "/a").collectAll().map(\.name).sorted() == ["new.txt", "written.txt"])
        #expect(try await other.contentsOfDirectory(path: folder + "/b").collectAll().map(\.name) == ["old.txt"])
        try await ftp.removeItem(path: folder, recursive: true)
    }
}

/// ProFTPD's extensions: server-side copies (mod_copy) and digests (mod_digest).
@Suite("FTP server extensions (ProFTPD)")
struct FTPServerExtensionTests {
    @Test("SITE CPFR/CPTO copies on the server: it works with a single connection, where streaming cannot")
    func serverSideCopy() async throws {
        var configuration = try TestServers.ftp(urlVariable: "GATEWAY_TEST_FTP_PROFTPD_URL", userVariable: "GATEWAY_TEST_FTP_PROFTPD_USER",
                                                remoteName: "proftpd-one")
        configuration.maxConnections = 1
        let ftp = FTPProvider(configuration: configuration)
        let folder = "/copy-\(UUID().uuidString.prefix(8))"
        try await ftp.createFolder(path: folder + "/tree/sub", withIntermediateDirectories: true)
        #expect(ftp.capabilities.features.contains(.serverSideCopy))
        // An argument-less FEAT line ("MFMT\r\n") is recognised too (its CRLF once stayed on the name).
        #expect(ftp.capabilities.features.contains(.setModificationDate))
        let data = Bytes.pattern(200_000, seed: 41)
        try await ftp.writeContents(path: folder + "/tree/a b.bin", data: data)
        try await ftp.writeContents(path: folder + "/tree/sub/c.txt", data: Data("c".utf8))

        try await ftp.copyItem(path: folder + "/tree/a b.bin", to: folder + "/copy.bin", overwrite: false, progress: nil)
        #expect(try await ftp.contents(path: folder + "/copy.bin") == data)
        await expectFailure(.alreadyExists) {
            try await ftp.copyItem(path: folder + "/tree/a b.bin", to: folder + "/copy.bin", overwrite: false, progress: nil)
        }
        try await ftp.copyItem(path: folder + "/tree/sub/c.txt", to: folder + "/copy.bin", overwrite: true, progress: nil)
        #expect(try await ftp.contents(path: folder + "/copy.bin") == Data("c".utf8))
        try await ftp.copyItem(path: folder + "/tree", to: folder + "/tree2", overwrite: false, progress: nil)
        #expect(try await ftp.contents(path: folder + "/tree2/sub/c.txt") == Data("c".utf8))
        #expect(try await ftp.contents(path: folder + "/tree2/a b.bin") == data)
        await expectFailure(.notFound) { try await ftp.copyItem(path: folder + "/nope", to: folder + "/x", overwrite: false, progress: nil) }
        await expectFailure(.notFound) { try await ftp.copyItem(path: folder + "/copy.bin", to: folder + "/no/such/x", overwrite: false, progress: nil) }
        try await ftp.removeItem(path: folder, recursive: true)
    }

    @Test("hashes from the server (XSHA1, XMD5, HASH after OPTS HASH) equal the bytes' digests; --checksum compares them")
    func serverHashes() async throws {
        try await ProviderFixture.ftpProftpd.run { s in
            let ftp = try #require(s.provider as? FTPProvider)
            let data = Bytes.pattern(123_457, seed: 42)
            try await ftp.createFolder(path: s.path("dst"), withIntermediateDirectories: false)
            try await ftp.writeContents(path: s.path("dst/h.bin"), data: data)
            #expect(ftp.capabilities.hashAlgorithms == [.md5, .sha1, .sha256])
            for algorithm in HashAlgorithm.allCases {
                var hasher = ContentHasher(algorithm)
                hasher.update(data)
                #expect(try await ftp.hash(of: s.path("dst/h.bin"), algorithm: algorithm) == hasher.finalize(), "\(algorithm)")
            }
            await expectFailure(.notFound) { _ = try await ftp.hash(of: s.path("missing.bin"), algorithm: .sha1) }

            // Same size and time, other bytes: --checksum finds the difference through the server's digest.
            try await ProviderFixture.local.run { local in
                try await local.provider.createFolder(path: local.path("src"), withIntermediateDirectories: false)
                try await local.provider.writeContents(path: local.path("src/h.bin"), data: Data(data.reversed()))
                var options = CopyOptions()
                options.checksum = true
                let source = TransferEndpoint(provider: local.provider, path: local.path("src"))
                let destination = TransferEndpoint(provider: ftp, path: s.path("dst"))
                let report = try await CopyEngine(options: options).check(source: source, destination: destination)
                #expect(report.different == ["h.bin"])
                #expect(report.notices.isEmpty)
                let summary = try await CopyEngine(options: options).run(.copy, from: source, to: destination)
                #expect(summary.copied == 1)
                #expect(try await CopyEngine(options: options).check(source: source, destination: destination).isIdentical)
            }
        }
    }
}

/// Holds an iterator for the one consumer of a test stream.
private final class ChunkBox: @unchecked Sendable {
    private var iterator: ByteStream.AsyncIterator
    init(_ iterator: ByteStream.AsyncIterator) { self.iterator = iterator }
    func next() async throws -> Data? { try await iterator.next() }
}

