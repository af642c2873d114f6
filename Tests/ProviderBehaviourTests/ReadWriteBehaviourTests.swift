import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

@Suite("Reading and writing")
struct ReadWriteBehaviourTests {
    @Test("whole and ranged reads return exactly the requested bytes", arguments: ProviderFixture.all)
    func readRanges(fixture: ProviderFixture) async throws {
        let data = Bytes.pattern(10_000)
        try await fixture.run { s in
            try await s.provider.writeContents(path: s.path("r.bin"), data: data)
            #expect(try await s.provider.contents(path: s.path("r.bin")) == data)
            let ranges: [(Int64, Int64?)] = [(0, 10), (5, 100), (9_997, nil), (9_990, 100), (1234, 0), (10_000, nil), (4096, 4096)]
            for (offset, length) in ranges {
                let got = try await s.provider.contents(path: s.path("r.bin"), offset: offset, length: length)
                let start = Int(min(offset, 10_000))
                let end = length.map { min(10_000, start + Int($0)) } ?? 10_000
                #expect(got == data.subdata(in: start..<end), "range offset \(offset) length \(String(describing: length))")
            }
            let stream = try await s.provider.readStream(path: s.path("r.bin"), offset: 100, length: 50)
            #expect(stream.expectedLength == 50)
        }
    }

    @Test("reading a missing file or a folder fails clearly", arguments: ProviderFixture.all)
    func readErrors(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            await expectFailure(.notFound) { _ = try await s.provider.contents(path: s.path("missing")) }
            try await s.provider.createFolder(path: s.path("folder"), withIntermediateDirectories: false)
            do {
                _ = try await s.provider.contents(path: s.path("folder"))
                Issue.record("reading a folder must fail")
            } catch {
                // Every server says it its own way (Apache and WsgiDAV 404, rclone 405, nginx and
                // lighttpd a redirect, FTP a 550): all of them are "is a directory".
                #expect(error.failureKind == .isADirectory, "\(fixture.name): \(error.failureKind) (\(error))")
            }
        }
    }

    @Test("write creates, overwrites, and refuses to overwrite when asked", arguments: ProviderFixture.all)
    func writeOverwriteRefuse(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            let created = try await s.provider.writeContents(path: s.path("w.txt"), data: Data("first".utf8))
            #expect(created.size == 5)
            try await s.provider.writeContents(path: s.path("w.txt"), data: Data("second!".utf8), overwrite: true)
            #expect(try await s.provider.contents(path: s.path("w.txt")) == Data("second!".utf8))
            await expectFailure(.alreadyExists) {
                try await s.provider.writeContents(path: s.path("w.txt"), data: Data("third".utf8), overwrite: false)
            }
            await expectFailure(.alreadyExists) {
                try await s.provider.writeContents(path: s.path("w.txt"), data: Data("third".utf8), overwrite: false, atomically: false)
            }
            #expect(try await s.provider.contents(path: s.path("w.txt")) == Data("second!".utf8))
            try await s.provider.writeContents(path: s.path("direct.txt"), data: Data("direct".utf8), atomically: false)
            #expect(try await s.provider.contents(path: s.path("direct.txt")) == Data("direct".utf8))
        }
    }

    @Test("writing into a missing folder fails and creates nothing", arguments: ProviderFixture.all)
    func writeIntoMissingFolder(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            if fixture.writesMakeFolders {
                // Object storage: the key's prefixes are its folders, there as soon as it is.
                try await s.provider.writeContents(path: s.path("no/such/folder/x.txt"), data: Data("x".utf8))
                #expect(try await s.provider.attributesOfItem(path: s.path("no/such")).isDirectory)
                #expect(try await s.provider.contents(path: s.path("no/such/folder/x.txt")) == Data("x".utf8))
                return
            }
            do {
                try await s.provider.writeContents(path: s.path("no/such/folder/x.txt"), data: Data("x".utf8))
                Issue.record("write into a missing folder must fail")
            } catch {
                // The same answer on every backend: not found, in one short line without a server's page.
                #expect(error.failureKind == .notFound, "got \(error)")
                let reason = ErrorMessage.reason(for: error)
                #expect(reason.count < 120 && !reason.contains("<") && !reason.lowercased().contains("doctype"), "\(reason)")
            }
            let remaining = try await s.provider.contentsOfDirectory(path: s.base).collectAll()
            #expect(remaining.isEmpty)
        }
    }

    @Test("zero-length files", arguments: ProviderFixture.all)
    func zeroLength(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            let item = try await s.provider.writeContents(path: s.path("empty"), data: Data())
            #expect(item.size == 0)
            #expect(try await s.provider.attributesOfItem(path: s.path("empty")).size == 0)
            #expect(try await s.provider.contents(path: s.path("empty")).isEmpty)
        }
    }

    @Test("a file larger than any buffer streams through intact", arguments: ProviderFixture.all)
    func largeFile(fixture: ProviderFixture) async throws {
        let data = Bytes.pattern(5 * 1024 * 1024 + 123, seed: 7)
        try await fixture.run { s in
            let progress = TransferProgress(totalBytes: Int64(data.count))
            let stream = ByteStream(data: data, chunkSize: 64 * 1024)
            _ = try await s.provider.write(path: s.path("big.bin"), from: stream,
                                           options: WriteOptions(expectedSize: Int64(data.count), progress: progress))
            #expect(progress.snapshot.completedBytes == Int64(data.count))
            #expect(try await s.provider.attributesOfItem(path: s.path("big.bin")).size == Int64(data.count))
            var chunks = 0
            var received = Data()
            for try await chunk in try await s.provider.readStream(path: s.path("big.bin")) {
                chunks += 1
                received.append(chunk)
            }
            #expect(chunks > 1, "a large file must arrive in several chunks")
            #expect(received == data)
        }
    }

    @Test("a stream that fails midway leaves nothing under the final name and the old file intact", arguments: ProviderFixture.all)
    func failedWriteIsAtomic(fixture: ProviderFixture) async throws {
        struct Broken: Error {}
        try await fixture.run { s in
            try await s.provider.writeContents(path: s.path("keep.txt"), data: Data("original".utf8))
            let sent = SentChunks()
            let failing = ByteStream(expectedLength: nil) {
                if sent.next() > 3 { throw Broken() }
                return Data(count: 64 * 1024)
            }
            for target in ["keep.txt", "new.txt"] {
                sent.reset()
                do {
                    _ = try await s.provider.write(path: s.path(target), from: failing, options: WriteOptions())
                    Issue.record("the write must fail")
                } catch {
                    #expect(error is Broken)
                }
            }
            #expect(try await s.provider.contents(path: s.path("keep.txt")) == Data("original".utf8))
            let names = try await s.provider.contentsOfDirectory(path: s.base).collectAll().map(\.name)
            #expect(names == ["keep.txt"], "no partial or temporary file may remain: \(names)")
        }
    }

    @Test("a write that receives fewer bytes than announced fails and leaves nothing", arguments: ProviderFixture.all)
    func truncatedWrite(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            await expectFailure(.connectionLost) {
                _ = try await s.provider.write(path: s.path("short.bin"), from: ByteStream(data: Data(count: 100)),
                                               options: WriteOptions(expectedSize: 1000))
            }
            let remaining = try await s.provider.contentsOfDirectory(path: s.base).collectAll()
            #expect(remaining.isEmpty)
        }
    }

    @Test("cancelling a write mid-transfer stops it promptly and cleans up", arguments: ProviderFixture.all)
    func cancelMidTransfer(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            let sent = SentChunks()
            let endless = ByteStream(expectedLength: nil) {
                _ = sent.next()
                try await Task.sleep(for: .milliseconds(2))
                return Data(count: 32 * 1024)
            }
            let provider = s.provider
            let path = s.path("endless.bin")
            let task = Task { try await provider.write(path: path, from: endless, options: WriteOptions()) }
            while sent.count < 20 { try await Task.sleep(for: .milliseconds(5)) }
            let clock = ContinuousClock()
            let start = clock.now
            task.cancel()
            let result = await task.result
            #expect(clock.now - start < .seconds(5), "cancellation must be prompt")
            if case .success = result { Issue.record("a cancelled write must not succeed") }
            if case .failure(let error) = result { #expect(error.failureKind == .cancelled, "got \(error)") }
            #expect(try await s.provider.contentsOfDirectory(path: s.base).collectAll().isEmpty)

            // Cancelling through the progress object works the same way.
            sent.reset()
            let progress = TransferProgress()
            let second = Task { try await provider.write(path: path, from: endless, options: WriteOptions(progress: progress)) }
            while sent.count < 10 { try await Task.sleep(for: .milliseconds(5)) }
            progress.cancel()
            if case .success = await second.result { Issue.record("a cancelled write must not succeed") }
            let remaining = try await s.provider.contentsOfDirectory(path: s.base).collectAll()
            #expect(remaining.isEmpty)
        }
    }

    @Test("versions: a stale version makes conditional reads and writes fail", arguments: ProviderFixture.all)
    func conditionalAccess(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            guard s.provider.capabilities.supports(.conditionalWrite) else {
                // Not claimed: a write that names a version must refuse, never write unchecked.
                let first = try await s.provider.writeContents(path: s.path("v.txt"), data: Data("v1".utf8))
                await expectFailure(.unsupported) {
                    _ = try await s.provider.write(path: s.path("v.txt"), from: ByteStream(data: Data("v2".utf8)),
                                                   options: WriteOptions(ifVersion: first.versionTag ?? "x"))
                }
                #expect(try await s.provider.contents(path: s.path("v.txt")) == Data("v1".utf8))
                return
            }
            let first = try await s.provider.writeContents(path: s.path("v.txt"), data: Data("v1".utf8))
            let version = try #require(first.versionTag)
            // Make sure the new version differs even on backends with coarse timestamps.
            try await s.provider.writeContents(path: s.path("v.txt"), data: Data("version 2".utf8))
            await expectFailure(.versionMismatch) {
                _ = try await s.provider.readStream(path: s.path("v.txt"), options: ReadOptions(ifVersion: version))
            }
            await expectFailure(.versionMismatch) {
                _ = try await s.provider.write(path: s.path("v.txt"), from: ByteStream(data: Data("v3".utf8)),
                                               options: WriteOptions(ifVersion: version))
            }
            #expect(try await s.provider.contents(path: s.path("v.txt")) == Data("version 2".utf8))
            let current = try #require(try await s.provider.attributesOfItem(path: s.path("v.txt")).versionTag)
            _ = try await s.provider.write(path: s.path("v.txt"), from: ByteStream(data: Data("v3".utf8)),
                                           options: WriteOptions(ifVersion: current))
            #expect(try await s.provider.contents(path: s.path("v.txt")) == Data("v3".utf8))
        }
    }

    @Test("modification times can be set where the provider declares it", arguments: ProviderFixture.all)
    func modificationTimes(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.writeContents(path: s.path("m.txt"), data: Data("m".utf8))
            let date = Date(timeIntervalSince1970: 1_500_000_000)
            guard s.provider.capabilities.supports(.setModificationDate) else {
                await expectFailure(.unsupported) { try await s.provider.setModificationDate(date, path: s.path("m.txt")) }
                return
            }
            try await s.provider.setModificationDate(date, path: s.path("m.txt"))
            let stamped = try await s.provider.attributesOfItem(path: s.path("m.txt"))
            let precision = Double(s.provider.capabilities.modificationTimePrecision.components.seconds) + 0.001
            #expect(abs(try #require(stamped.modificationDate).timeIntervalSince(date)) <= precision)

            let withDate = try await s.provider.write(path: s.path("n.txt"), from: ByteStream(data: Data("n".utf8)),
                                                      options: WriteOptions(modificationDate: date))
            #expect(abs(try #require(withDate.modificationDate).timeIntervalSince(date)) <= precision)
        }
    }
}

/// Counts chunks handed out by a test stream.
final class SentChunks: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    var count: Int { lock.withLock { value } }

    /// Increments and returns the new count.
    func next() -> Int { lock.withLock { value += 1; return value } }

    func reset() { lock.withLock { value = 0 } }
}
