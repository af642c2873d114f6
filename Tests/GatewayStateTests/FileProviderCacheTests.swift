import Foundation
import GatewayCore
import GatewayState
import Synchronization
import Testing

@Suite("ByteRanges")
struct ByteRangesTests {
    @Test("inserted ranges merge when they touch or overlap; gaps are found")
    func mergesAndFindsGaps() {
        var ranges = ByteRanges()
        ranges.insert(10..<20)
        ranges.insert(30..<40)
        #expect(ranges.ranges == [10..<20, 30..<40])
        #expect(ranges.firstMissing(in: 10..<20) == nil)
        #expect(ranges.firstMissing(in: 5..<15) == 5)
        #expect(ranges.firstMissing(in: 15..<35) == 20)
        #expect(ranges.firstMissing(in: 20..<30) == 20)
        #expect(!ranges.contains(0..<1) && ranges.contains(12..<18) && ranges.contains(5..<5))
        #expect(ranges.insert(20..<30) == 10, "touches both: one range, 10 bytes more")
        #expect(ranges.ranges == [10..<40])
        ranges.insert(0..<5)
        ranges.insert(45..<50)
        #expect(ranges.insert(3..<47) == 5 + 5, "swallows everything, adding the two 5-byte gaps")
        #expect(ranges.ranges == [0..<50])
        #expect(ranges.count == 50)
        ranges.insert(60..<60)   // empty: nothing
        #expect(ranges.ranges == [0..<50])
    }

    @Test("many random ranges agree with a bitmap")
    func agreesWithBitmap() {
        var generator = SystemRandomNumberGenerator()
        var ranges = ByteRanges()
        var bits = [Bool](repeating: false, count: 400)
        for _ in 0..<300 {
            let start = Int.random(in: 0..<390, using: &generator)
            let end = min(400, start + Int.random(in: 0...12, using: &generator))
            let before = bits.filter { $0 }.count
            let added = ranges.insert(Int64(start)..<Int64(end))
            for index in start..<end { bits[index] = true }
            #expect(added == Int64(bits.filter { $0 }.count - before))
            let probe = Int.random(in: 0..<400, using: &generator)
            let probeEnd = min(400, probe + Int.random(in: 1...30, using: &generator))
            let expected = (probe..<probeEnd).first { !bits[$0] }.map(Int64.init)
            #expect(ranges.firstMissing(in: Int64(probe)..<Int64(probeEnd)) == expected)
        }
        #expect(ranges.count == Int64(bits.filter { $0 }.count))
        for (left, right) in zip(ranges.ranges, ranges.ranges.dropFirst()) { #expect(left.upperBound < right.lowerBound) }
    }
}

/// A provider over a folder of this machine, for the cache to fetch from (the state tests don't
/// link the Local backend): reads are ranged, version-checked and counted.
final class FolderProvider: FileProviderReadWrite {
    static let type = "folder"
    let root: URL
    let readCount = Mutex(0)
    init(root: URL) { self.root = root }
    var name: String { "folder" }
    var baseURL: URL { root }
    var capabilities: ProviderCapabilities { ProviderCapabilities(features: []) }
    func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing { DirectoryListing(path: path, failure: FileProviderError.unsupported(operation: "listing", path: path)) }
    func attributesOfItem(path: String) async throws -> FileObject {
        let attributes = try FileManager.default.attributesOfItem(atPath: root.path + path)
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        let date = attributes[.modificationDate] as? Date ?? Date(timeIntervalSince1970: 0)
        var item = FileObject(path: path, type: .file)
        item.size = size
        item.versionTag = "\(size)-\(date.timeIntervalSince1970)"
        return item
    }
    func storageProperties(path: String) async throws -> VolumeObject { VolumeObject() }
    func url(of path: String) throws -> URL { root.appendingPathComponent(String(path.dropFirst())) }
    func relativePathOf(url: URL) throws -> String { "/" + url.lastPathComponent }
    func readStream(path: String, options: ReadOptions) async throws -> ByteStream {
        readCount.withLock { $0 += 1 }
        let current = try await attributesOfItem(path: path)
        if let wanted = options.ifVersion, wanted != current.versionTag {
            throw FileProviderError.versionMismatch(path: path, expected: wanted, actual: current.versionTag)
        }
        let data = try Data(contentsOf: root.appendingPathComponent(String(path.dropFirst())))
        let start = Int(min(options.offset, Int64(data.count)))
        let end = options.length.map { min(data.count, start + Int($0)) } ?? data.count
        let slice = data[start..<end]
        return ByteStream(data: Data(slice), chunkSize: 65_536)
    }
    func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        throw FileProviderError.unsupported(operation: "write", path: path)
    }
}

@Suite("FileProviderCache: placeholders, materialized items, pins and a hard limit")
struct FileProviderCacheTests {
    struct Fixture {
        let folder: URL
        let provider: FolderProvider
        let cache: FileProviderCache
        let pins: PinList

        init(limit: Int64) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("fpcache-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("root/pinned"), withIntermediateDirectories: true)
            provider = FolderProvider(root: folder.appendingPathComponent("root"))
            pins = try PinList.open(directory: folder.appendingPathComponent("state"), cacheFolder: folder.appendingPathComponent("cache").path)
            cache = try FileProviderCache(folder: folder.appendingPathComponent("cache/read").path, limit: limit, pins: pins)
        }

        func file(_ path: String, size: Int, byte: UInt8 = 1) async throws -> FileObject {
            try Data(repeating: byte, count: size).write(to: folder.appendingPathComponent("root" + path))
            return try await provider.attributesOfItem(path: path)
        }

        func key(_ item: FileObject) throws -> FileProviderCache.Key { try #require(FileProviderCache.Key(item)) }

        /// What `range` takes on disk: whole allocation units, as the cache counts it.
        func onDisk(_ range: Range<Int64>) -> Int64 {
            let unit = cache.allocationUnit
            return (range.upperBound + unit - 1) / unit * unit - range.lowerBound / unit * unit
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    @Test("an item goes placeholder → partial → materialized, and is read back as it was")
    func states() async throws {
        let fixture = try Fixture(limit: 10 << 20)
        defer { fixture.remove() }
        let item = try await fixture.file("/a", size: 300_000, byte: 9)
        let key = try fixture.key(item)
        #expect(fixture.cache.state(of: key) == .placeholder)
        let entry = try fixture.cache.acquire(key)
        #expect(try entry.write(Data(repeating: 9, count: 1000), at: 5000))
        #expect(fixture.cache.state(of: key) == .partial)
        fixture.cache.release(entry)
        try await fixture.cache.materialize(item, from: fixture.provider)
        #expect(fixture.cache.state(of: key) == .materialized)
        #expect(fixture.cache.materialized() == [key])
        let again = try fixture.cache.acquire(key)
        #expect(try again.read(at: 0, length: 300_000) == Data(repeating: 9, count: 300_000))
        fixture.cache.release(again)
        #expect(fixture.cache.usage.total == fixture.onDisk(0..<300_000), "what the disk holds: whole blocks")
        #expect(Self.diskUse(of: fixture.cache.folder) <= fixture.cache.usage.total)
        // Two ranged reads: before and after the kept 1000 bytes.
        #expect(fixture.provider.readCount.withLock { $0 } == 2)
        // Another version is another item: a placeholder.
        let changed = try await fixture.file("/a", size: 300_001, byte: 9)
        #expect(fixture.cache.state(of: try fixture.key(changed)) == .placeholder)
        #expect(try fixture.cache.evict("/a") == fixture.onDisk(0..<300_000))
        #expect(fixture.cache.state(of: key) == .placeholder)
        #expect(fixture.cache.usage.total == 0)
    }

    /// What the files in `folder` take on disk, as `du` counts it.
    static func diskUse(of folder: String) -> Int64 {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).reduce(Int64(0)) { total, name in
            var info = stat()
            return stat(folder + "/" + name, &info) == 0 ? total + Int64(info.st_blocks) * 512 : total
        }
    }

    @Test("the limit counts the disk: bytes stored in odd-sized pieces never take more blocks than the limit")
    func limitCountsBlocks() async throws {
        let fixture = try Fixture(limit: 64 * 4096)
        defer { fixture.remove() }
        let item = try await fixture.file("/odd", size: 1 << 20)
        let entry = try fixture.cache.acquire(try fixture.key(item))
        defer { fixture.cache.release(entry) }
        var offset: Int64 = 0
        var stored = 0
        // 1000-byte pieces: most end inside a block, which the disk holds whole.
        while offset < 1 << 20 {
            if try entry.write(Data(repeating: 1, count: 1000), at: offset) { stored += 1000 }
            #expect(Self.diskUse(of: fixture.cache.folder) <= fixture.cache.limit, "after the piece at \(offset)")
            #expect(fixture.cache.usage.total <= fixture.cache.limit)
            offset += 1000
        }
        #expect(stored > 200_000 && stored < 64 * 4096, "stored until the blocks were used up: \(stored)")
        #expect(fixture.cache.usage.total == fixture.onDisk(0..<Int64(stored)))
    }

    @Test("a file of over 256 allocation units is charged one unit more (its extent map, which du counts) and gives it back when removed")
    func extentMapCharged() async throws {
        let fixture = try Fixture(limit: 64 << 20)
        defer { fixture.remove() }
        let unit = fixture.cache.allocationUnit
        let item = try await fixture.file("/large", size: Int(300 * unit))
        let entry = try fixture.cache.acquire(try fixture.key(item))
        // Pieces far apart, as a reader jumping through a file leaves them.
        for index in [0, 200, 100, 299] as [Int64] {
            #expect(try entry.write(Data(repeating: 2, count: Int(unit)), at: index * unit))
        }
        #expect(fixture.cache.usage.total == 4 * unit, "4 units, no map yet")
        for index in 1..<257 as Range<Int64> where ![100, 200].contains(index) {
            #expect(try entry.write(Data(repeating: 2, count: Int(unit)), at: index * unit))
        }
        #expect(fixture.cache.usage.total == 259 * unit, "258 units and the map's")
        #expect(Self.diskUse(of: fixture.cache.folder) <= fixture.cache.usage.total)
        fixture.cache.release(entry)
        #expect(try fixture.cache.evict("/large") == 259 * unit)
        #expect(fixture.cache.usage.total == 0)
    }

    @Test("the limit is hard: idle items make room least recently used first; pinned and open ones never do")
    func hardLimit() async throws {
        let fixture = try Fixture(limit: 1_024_000)
        defer { fixture.remove() }
        let pinned = try await fixture.file("/pinned/p", size: 409_600)
        try fixture.cache.pin("/pinned", needing: 409_600)
        try await fixture.cache.materialize(pinned, from: fixture.provider)
        let old = try await fixture.file("/old", size: 307_200)
        try await fixture.cache.materialize(old, from: fixture.provider)
        let recent = try await fixture.file("/recent", size: 307_200)
        try await fixture.cache.materialize(recent, from: fixture.provider)
        #expect(fixture.cache.usage.total == 1_024_000)
        // Room for 300,000 more: the least recently used idle item goes, not the pinned one.
        let next = try await fixture.file("/next", size: 307_200)
        try await fixture.cache.materialize(next, from: fixture.provider)
        #expect(fixture.cache.state(of: try fixture.key(old)) == .placeholder)
        #expect(fixture.cache.state(of: try fixture.key(recent)) == .materialized)
        #expect(fixture.cache.state(of: try fixture.key(pinned)) == .materialized)
        let usage = fixture.cache.usage
        #expect(usage.total == 1_024_000 && usage.pinned == 409_600 && usage.pinnedExpected == 409_600 && usage.entries == 3)
        // An item in use is kept: with both idle ones held open, nothing can make room.
        let holdRecent = try fixture.cache.acquire(try fixture.key(recent))
        let holdNext = try fixture.cache.acquire(try fixture.key(next))
        let big = try await fixture.file("/big", size: 204_800)
        await #expect(throws: FileProviderCache.CacheError.full(needed: 204_800, limit: 1_024_000)) {
            try await fixture.cache.materialize(big, from: fixture.provider)
        }
        #expect(fixture.cache.usage.total == 1_024_000, "never past the limit")
        #expect(throws: FileProviderCache.CacheError.busy(path: "/pinned/p")) { try fixture.cache.evict("/pinned/p") }
        fixture.cache.release(holdRecent)
        fixture.cache.release(holdNext)
        try await fixture.cache.materialize(big, from: fixture.provider)
        #expect(fixture.cache.usage.total <= 1_024_000)
        #expect(fixture.cache.state(of: try fixture.key(pinned)) == .materialized)
    }

    @Test("pins that would need more than the limit are refused; pins survive a new cache; unpinned items can go")
    func pins() async throws {
        let fixture = try Fixture(limit: 1_024_000)
        defer { fixture.remove() }
        try fixture.cache.pin("/pinned", needing: 716_800)
        #expect(fixture.cache.isPinned("/pinned/deep/er") && fixture.cache.isPinned("/pinned") && !fixture.cache.isPinned("/pinnedx"))
        try fixture.cache.pin("/pinned/inner", needing: 102_400)   // inside: counted once
        #expect(fixture.cache.usage.pinnedExpected == 716_800)
        #expect(throws: FileProviderCache.CacheError.pinsExceedLimit(needed: 1_126_400, limit: 1_024_000)) {
            try fixture.cache.pin("/other", needing: 409_600)
        }
        #expect(!fixture.cache.isPinned("/other"), "a refused pin leaves nothing behind")
        // The pinned folder grew past what it was expected to need: what it holds counts.
        for index in 0..<4 { try await fixture.cache.materialize(try await fixture.file("/pinned/g\(index)", size: 204_800), from: fixture.provider) }
        #expect(fixture.cache.usage.pinnedExpected == 819_200)
        #expect(throws: FileProviderCache.CacheError.pinsExceedLimit(needed: 1_126_400, limit: 1_024_000)) {
            try fixture.cache.pin("/other", needing: 307_200)
        }
        try fixture.cache.movePins(from: "/pinned", to: "/moved")
        #expect(fixture.cache.pins == ["/moved", "/moved/inner"])
        let reopened = try FileProviderCache(folder: fixture.folder.appendingPathComponent("cache/read2").path, limit: 10,
                                             pins: try PinList.open(directory: fixture.folder.appendingPathComponent("state"),
                                                                    cacheFolder: fixture.folder.appendingPathComponent("cache").path))
        #expect(reopened.pins == ["/moved", "/moved/inner"], "kept in the state store")
        try fixture.cache.unpin("/moved")
        #expect(fixture.cache.pins.isEmpty)
        #expect(try fixture.pins.paths().isEmpty)
    }

    @Test("items nobody read for a while are evicted by age; pinned ones stay")
    func maximumAge() async throws {
        let fixture = try Fixture(limit: 1_000_000)
        defer { fixture.remove() }
        try fixture.cache.pin("/pinned", needing: 1000)
        try await fixture.cache.materialize(try await fixture.file("/pinned/p", size: 1000), from: fixture.provider)
        try await fixture.cache.materialize(try await fixture.file("/q", size: 1000), from: fixture.provider)
        #expect(fixture.cache.evictIdle(olderThan: .seconds(60)) == 0, "read just now")
        #expect(fixture.cache.evictIdle(olderThan: .zero) == fixture.onDisk(0..<1000), "only the unpinned one")
        #expect(fixture.cache.usage.total == fixture.onDisk(0..<1000))
    }

    @Test("with an index, what one run fetched is there for the next; files the index does not vouch for are removed")
    func keptAcrossRuns() async throws {
        let fixture = try Fixture(limit: 1_000_000)
        defer { fixture.remove() }
        let folder = fixture.folder.appendingPathComponent("kept").path
        let index = try CacheIndex.open(directory: fixture.folder.appendingPathComponent("state"), cacheFolder: folder)
        let first = try FileProviderCache(folder: folder, limit: 1_000_000, index: index)
        let whole = try await fixture.file("/whole", size: 200_000, byte: 5)
        try await first.materialize(whole, from: fixture.provider)
        let part = try await fixture.file("/part", size: 100_000, byte: 6)
        let partEntry = try first.acquire(try fixture.key(part))
        #expect(try partEntry.write(Data(repeating: 6, count: 1000), at: 50_000))
        first.release(partEntry)
        // Changed by the client itself (generation 1): not for the next run.
        try await first.materialize(try await fixture.file("/own", size: 1000, byte: 7), generation: 1, from: fixture.provider)
        try first.persist()
        try Data("junk".utf8).write(to: URL(fileURLWithPath: folder + "/junk"))

        let second = try FileProviderCache(folder: folder, limit: 1_000_000, index: index)
        #expect(second.state(of: try fixture.key(whole)) == .materialized)
        #expect(second.state(of: try fixture.key(part)) == .partial)
        #expect(second.usage.total == fixture.onDisk(0..<200_000) + fixture.onDisk(50_000..<51_000) && second.usage.entries == 2)
        let entry = try second.acquire(try fixture.key(whole))
        #expect(try entry.read(at: 0, length: 200_000) == Data(repeating: 5, count: 200_000))
        second.release(entry)
        #expect(!FileManager.default.fileExists(atPath: folder + "/junk"), "a file the index does not list is removed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == 2)
        let reads = fixture.provider.readCount.withLock { $0 }
        try await second.materialize(whole, from: fixture.provider)
        #expect(fixture.provider.readCount.withLock { $0 } == reads, "nothing fetched again")

        // An evicted item leaves the index; a cache file that lost its bytes is not trusted.
        try second.evict("/whole")
        try second.persist()
        let partFile = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first)
        #expect(truncate(folder + "/" + partFile, 10) == 0)
        let third = try FileProviderCache(folder: folder, limit: 1_000_000, index: index)
        #expect(third.usage.entries == 0 && third.usage.total == 0)
        #expect(try index.rows().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }
}
