import Foundation
import GatewayCore
import GatewayLocal
@testable import GatewayMount
import GatewayState
import Synchronization
import Testing

/// A local provider that records the ranged reads asked of it (the mount's reads are checked
/// against what reached the "remote").
final class RecordingProvider: FileProviderReadWrite {
    static let type = "recording"
    let inner: LocalFileProvider
    let reads = Mutex<[ReadOptions]>([])
    init(_ inner: LocalFileProvider) { self.inner = inner }
    var name: String { inner.name }
    var baseURL: URL { inner.baseURL }
    var capabilities: ProviderCapabilities { inner.capabilities }
    func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing { inner.contentsOfDirectory(path: path, pageSize: pageSize) }
    func attributesOfItem(path: String) async throws -> FileObject { try await inner.attributesOfItem(path: path) }
    func storageProperties(path: String) async throws -> VolumeObject { try await inner.storageProperties(path: path) }
    func url(of path: String) throws -> URL { try inner.url(of: path) }
    func relativePathOf(url: URL) throws -> String { try inner.relativePathOf(url: url) }
    func readStream(path: String, options: ReadOptions) async throws -> ByteStream {
        reads.withLock { $0.append(options) }
        return try await inner.readStream(path: path, options: options)
    }
    func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        try await inner.write(path: path, from: stream, options: options)
    }
    var requests: [ReadOptions] { reads.withLock { $0 } }
}

@Suite("The mount's read cache and read-ahead")
struct ReadCacheTests {
    struct Fixture {
        let folder: URL
        let provider: RecordingProvider
        let cache: FileProviderCache
        let data: Data
        let item: FileObject

        init(size: Int, limit: Int64 = 1 << 30) async throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("readcache-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("root"), withIntermediateDirectories: true)
            data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 11) })
            try data.write(to: folder.appendingPathComponent("root/file.bin"))
            let local = try LocalFileProvider(name: "local", root: folder.appendingPathComponent("root").path,
                                              stateDirectory: folder.appendingPathComponent("state"))
            provider = RecordingProvider(local)
            cache = try FileProviderCache(folder: folder.appendingPathComponent("read").path, limit: limit)
            item = try await provider.attributesOfItem(path: "/file.bin")
        }

        var pin: ReadPin { ReadPin(path: "/file.bin", version: item.versionTag, size: item.size, sequence: 0) }

        func open() -> OpenFile {
            let pin = self.pin
            return OpenFile(provider: provider, inode: 2, cache: cache, pin: pin) { pin }
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    @Test("a sequential read of 16 MiB in 128 KiB requests makes a few ranged reads whose windows double")
    func sequentialReadAheadGrows() async throws {
        let fixture = try await Fixture(size: 16 << 20)
        defer { fixture.remove() }
        #expect(fixture.item.versionTag != nil)
        let file = fixture.open()
        var read = Data()
        var offset: Int64 = 0
        while true {
            let chunk = try await file.read(offset: offset, length: 128 << 10)
            if chunk.isEmpty { break }
            read.append(chunk)
            offset += Int64(chunk.count)
        }
        await file.close()
        #expect(read == fixture.data)
        let requests = fixture.provider.requests
        // 128 KiB, then windows of 256 KiB, 512 KiB, ... : well under one request per kernel read (128).
        #expect(requests.count <= 8, "\(requests.map { "\($0.offset)+\($0.length ?? -1)" })")
        #expect(requests.allSatisfy { $0.ifVersion == fixture.item.versionTag }, "every fetch is pinned to the listed version")
        let lengths = requests.compactMap(\.length)
        #expect(zip(lengths, lengths.dropFirst()).dropLast().allSatisfy { $0.1 >= $0.0 * 2 }, "windows grow: \(lengths)")
        // Contiguous: every request starts where the previous one ended.
        for (previous, next) in zip(requests, requests.dropFirst()) { #expect(next.offset == previous.offset + (previous.length ?? 0)) }
    }

    @Test("random page reads fetch about what they ask for; bytes read once are not fetched again, by any handle")
    func randomReadsAndReuse() async throws {
        let fixture = try await Fixture(size: 32 << 20)
        defer { fixture.remove() }
        let file = fixture.open()
        let offsets: [Int64] = [20 << 20, 3 << 20, 27 << 20, 9 << 20, 14 << 20]
        for offset in offsets {
            let page = try await file.read(offset: offset, length: 4096)
            #expect(page == fixture.data[Int(offset)..<Int(offset) + 4096])
        }
        let fetched = fixture.provider.requests.reduce(Int64(0)) { $0 + ($1.length ?? Int64.max / 8) }
        #expect(fixture.provider.requests.count == offsets.count)
        #expect(fetched <= Int64(offsets.count) * OpenFile.smallestWindow, "random reads fetched \(fetched) bytes")
        // The pages reach the cache file through its writer, just after the reads have them: wait
        // until the shared entry holds every page (bounded; only a broken run waits long). The
        // cache's usage is no sign: it counts room reserved before the bytes are written.
        let entry = try fixture.cache.acquire(OpenFile.cacheKey(fixture.pin))
        let deadline = ContinuousClock.now + .seconds(30)
        func held() -> Bool { offsets.allSatisfy { entry.firstMissing(in: $0..<($0 + 4096)) == nil } }
        while !held(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(held(), "every page read is in the cache file")
        fixture.cache.release(entry)
        #expect(fixture.cache.usage.total >= Int64(offsets.count) * 4096)
        // Again, through the same handle and through a second one: from the cache.
        let second = fixture.open()
        for offset in offsets {
            #expect(try await file.read(offset: offset + 100, length: 1000) == fixture.data[Int(offset) + 100..<Int(offset) + 1100])
            #expect(try await second.read(offset: offset, length: 4096) == fixture.data[Int(offset)..<Int(offset) + 4096])
        }
        #expect(fixture.provider.requests.count == offsets.count, "nothing fetched twice")
        // A read straddling a cached page and a missing range fetches only from the gap.
        let straddle = try await second.read(offset: (3 << 20) + 2048, length: 256 << 10)
        #expect(straddle == fixture.data[(3 << 20) + 2048..<(3 << 20) + 2048 + (256 << 10)])
        #expect(fixture.provider.requests.count == offsets.count + 1)
        #expect((fixture.provider.requests.last?.offset ?? 0) > (3 << 20) + 2048, "fetched from the first missing byte")
        await file.close()
        await second.close()
    }

    @Test("reads that arrive out of order inside the stream's window are answered from the one stream")
    func outOfOrderReads() async throws {
        let fixture = try await Fixture(size: 4 << 20)
        defer { fixture.remove() }
        let file = fixture.open()
        for index in 0..<8 { _ = try await file.read(offset: Int64(index) << 17, length: 128 << 10) }
        #expect(fixture.provider.requests.count == 3, "128 KiB, 256 KiB, then a window of 1 MiB from 384 KiB")
        // The kernel's parallel read-ahead: 1 MiB + 128 KiB arrives before 1 MiB, then 1 MiB + 256 KiB.
        let ahead = try await file.read(offset: (1 << 20) + (128 << 10), length: 128 << 10)
        let behind = try await file.read(offset: 1 << 20, length: 128 << 10)
        let next = try await file.read(offset: (1 << 20) + (256 << 10), length: 128 << 10)
        let mebibyte = 1 << 20
        let window = 128 << 10
        #expect(ahead == fixture.data[(mebibyte + window)..<(mebibyte + 2 * window)])
        #expect(behind == fixture.data[mebibyte..<(mebibyte + window)])
        #expect(next == fixture.data[(mebibyte + 2 * window)..<(mebibyte + 3 * window)])
        await file.close()
        #expect(fixture.provider.requests.count == 3, "\(fixture.provider.requests.map { "\($0.offset)+\($0.length ?? -1)" })")
    }

    @Test("asynchronous read-ahead: 1 MiB reads taken a few MiB out of order keep one growing stream")
    func asynchronousReadAhead() async throws {
        let fixture = try await Fixture(size: 48 << 20)
        defer { fixture.remove() }
        let file = fixture.open()
        let mebibyte = 1 << 20
        // The kernel's requests in flight, answered in a scrambled order (as tasks on a pool may
        // take them; each a few MiB from where the reads got to): every byte right, and the
        // windows still double.
        var order: [Int] = []
        for group in stride(from: 0, to: 48, by: 4) { order += [2, 0, 3, 1].map { group + $0 } }
        for index in order {
            let part = try await file.read(offset: Int64(index * mebibyte), length: mebibyte)
            #expect(part == fixture.data[(index * mebibyte)..<((index + 1) * mebibyte)], "MiB \(index)")
        }
        await file.close()
        let requests = fixture.provider.requests
        // Not a request per disorder: a handful of doubling windows cover the 48 MiB.
        #expect(requests.count <= 10, "\(requests.map { "\($0.offset)+\($0.length ?? -1)" })")
        let fetched = requests.reduce(Int64(0)) { $0 + ($1.length ?? 0) }
        #expect(fetched <= Int64(56 * mebibyte), "fetched \(fetched) bytes for 48 MiB: \(requests.map { "\($0.offset)+\($0.length ?? -1)" })")
    }

    @Test("a handle's entry is let go only once its bytes are written: a private entry leaves nothing counted or on disk")
    func closeWaitsForTheWriter() async throws {
        let fixture = try await Fixture(size: 4 << 20)
        defer { fixture.remove() }
        // No version tag: the entry is the handle's own, removed when it closes.
        let pin = ReadPin(path: "/file.bin", version: nil, size: fixture.item.size, sequence: 0)
        let file = OpenFile(provider: fixture.provider, inode: 2, cache: fixture.cache, pin: pin) { pin }
        var offset: Int64 = 0
        while offset < 4 << 20 {
            let chunk = try await file.read(offset: offset, length: 128 << 10)
            #expect(chunk == fixture.data[Int(offset)..<Int(offset) + chunk.count])
            offset += Int64(chunk.count)
        }
        await file.close()
        #expect(fixture.cache.usage.total == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.cache.folder).isEmpty)
    }

    @Test("a file changed on the remote while open fails the read (version mismatch), never mixing versions")
    func changedRemoteFails() async throws {
        let fixture = try await Fixture(size: 1 << 20)
        defer { fixture.remove() }
        let file = fixture.open()
        #expect(try await file.read(offset: 0, length: 4096) == fixture.data.prefix(4096))
        // Changed in place (same size), as another program on the remote would.
        try await Task.sleep(for: .milliseconds(20))
        try Data(repeating: 7, count: 1 << 20).write(to: fixture.folder.appendingPathComponent("root/file.bin"))
        await #expect(throws: FileProviderError.self) { _ = try await file.read(offset: 512 << 10, length: 4096) }
        // What it had is still what the listed version held.
        #expect(try await file.read(offset: 0, length: 4096) == fixture.data.prefix(4096))
        await file.close()
    }

    @Test("a read past a full cache is answered all the same, from what arrived, and the cache stays within its limit")
    func readPastAFullCache() async throws {
        let fixture = try await Fixture(size: 8 << 20, limit: 1 << 20)
        defer { fixture.remove() }
        let file = fixture.open()
        var read = Data()
        var offset: Int64 = 0
        while true {
            let chunk = try await file.read(offset: offset, length: 128 << 10)
            if chunk.isEmpty { break }
            read.append(chunk)
            offset += Int64(chunk.count)
            #expect(fixture.cache.usage.total <= 1 << 20)
        }
        #expect(read == fixture.data)
        // Out of order: some bytes come from the cache file, some were never kept.
        for start in stride(from: 7 << 20, through: 0, by: -(1 << 20)) {
            #expect(try await file.read(offset: Int64(start + 4096), length: 300_000) == fixture.data[(start + 4096)..<(start + 4096 + 300_000)])
        }
        #expect(fixture.cache.usage.total <= 1 << 20)
        await file.close()
    }
}
