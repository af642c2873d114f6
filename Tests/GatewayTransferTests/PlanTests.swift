import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import GatewayTestSupport
import StorageGateway
import Synchronization
@testable import GatewayTransfer
import Testing

/// Issue 33: plans. Their chunks together are exactly the source listing, whatever the number of
/// chunks; the same tree plans the same; chunk lines carry every name; and a chunk file or a
/// manifest that changed, or lies, is refused.
@Suite("Plans: listing once, chunks, workers")
struct PlanTests {
    /// Awkward names: a tab, a line feed, a carriage return, a backslash, control characters,
    /// non-ASCII, a leading dash, percent signs and spaces.
    static let awkward = ["tab\tname", "new\nline", "carriage\rreturn", "back\\slash", "bell\u{7}", "del\u{7F}", "naïve café",
                          "日本語", "-leading dash", "100% sure", "  spaces  ", "#hash?", "\\t literally"]

    /// A tree on the local disk: `files` small files spread over nested folders, the awkward
    /// names, empty folders, and a sparse 5 GiB file (heavier than any chunk share). Returns the
    /// relative paths of everything (folders too).
    static func makeTree(at root: String, files: Int, bigFolder: Int = 0) throws -> Set<String> {
        var paths: Set<String> = []
        func folder(_ relative: String) throws {
            try FileManager.default.createDirectory(atPath: root + "/" + relative, withIntermediateDirectories: true)
            var prefix = ""
            for component in relative.split(separator: "/") {
                prefix += (prefix.isEmpty ? "" : "/") + component
                paths.insert(prefix)
            }
        }
        func file(_ relative: String, size: Int) throws {
            let fd = open(root + "/" + relative, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
            guard fd >= 0 else { throw CocoaError.posix(errno, path: relative) }
            defer { close(fd) }
            if size > 0 { guard ftruncate(fd, off_t(size)) == 0 else { throw CocoaError.posix(errno, path: relative) } }
            paths.insert(relative)
        }
        try folder("empty/also empty")
        try folder("awkward")
        for name in awkward { try file("awkward/" + name, size: name.utf8.count) }
        try folder("awkward/folder\twith tab")
        try file("awkward/folder\twith tab/inside", size: 3)
        try file("big.bin", size: 5 << 30)
        var made = awkward.count + 2
        var index = 0
        while made < files {
            let group = "d\(index % 37)/e\(index % 11)"
            if !paths.contains(group) { try folder(group) }
            try file("\(group)/f\(index).dat", size: (index * 7919) % 200_000)
            made += 1
            index += 1
        }
        if bigFolder > 0 {
            try folder("wide")
            for entry in 0..<bigFolder { try file("wide/w\(entry)", size: 0) }
        }
        return paths
    }

    static func endpoints(_ root: String, destination: String) throws -> (TransferEndpoint, TransferEndpoint) {
        let local = try LocalFileProvider(name: "local", root: "/")
        return (TransferEndpoint(provider: local, path: root), TransferEndpoint(provider: local, path: destination))
    }

    static func builder(_ root: String, chunking: PlanBuilder.Chunking, mode: PlanMode = .copy) throws -> PlanBuilder {
        let (source, destination) = try endpoints(root, destination: root + "-copy")
        return PlanBuilder(mode: mode, source: source, sourceLocation: .init(remote: nil, path: root), destination: destination,
                           destinationLocation: .init(remote: nil, path: root + "-copy"), options: .init(), chunking: chunking)
    }

    static func build(_ root: String, chunking: PlanBuilder.Chunking, mode: PlanMode = .copy, into folder: String) async throws -> PlanBuilder.Output {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return try await builder(root, chunking: chunking, mode: mode).build(in: URL(fileURLWithPath: folder))
    }

    /// One listing, cut as many ways as asked (the walk is the same every time).
    static func cuts(_ root: String, _ chunkings: [PlanBuilder.Chunking], into folder: String) async throws -> [PlanBuilder.Output] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let listing = try await builder(root, chunking: .count(1)).list(into: URL(fileURLWithPath: folder + "/listing.spool"))
        var outputs: [PlanBuilder.Output] = []
        for (index, chunking) in chunkings.enumerated() {
            let cutFolder = folder + "/cut-\(index)"
            try FileManager.default.createDirectory(atPath: cutFolder, withIntermediateDirectories: true)
            outputs.append(try builder(root, chunking: chunking).cut(listing, into: URL(fileURLWithPath: cutFolder)))
        }
        return outputs
    }

    static func entries(of url: URL) throws -> [PlanEntry] {
        var reader = try PlanChunk(file: url).entries()
        var all: [PlanEntry] = []
        while let entry = try reader.next() { all.append(entry) }
        return all
    }

    /// Checks that the chunks hold every path of `expected` exactly once (a split file as ranges
    /// that cover it exactly, in order, as the manifest's split files say), that the manifest's
    /// counts and hashes are the files', and that no chunk weighs more than its share plus one
    /// entry (the cut is contiguous).
    static func expectCoverage(_ output: PlanBuilder.Output, expected: Set<String>, chunks: Int,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(output.plan.chunks.count == chunks, sourceLocation: sourceLocation)
        #expect(output.chunkFiles.count == chunks, sourceLocation: sourceLocation)
        var seen: Set<String> = []
        var duplicates: [String] = []
        var weights: [Double] = []
        var heaviest = 0.0
        // Each split file's ranges, in the order met, and its size.
        var ranges: [String: (size: Int64, ends: [Int64])] = [:]
        for (index, url) in output.chunkFiles.enumerated() {
            let entries = try entries(of: url)
            let record = output.plan.chunks[index]
            let data = try Data(contentsOf: url)
            #expect(record.length == Int64(data.count), sourceLocation: sourceLocation)
            #expect(record.sha256 == ContentHasher.hash(data, .sha256), sourceLocation: sourceLocation)
            #expect(record.files == entries.filter { $0.kind == .file || $0.kind == .link }.count, sourceLocation: sourceLocation)
            #expect(record.folders == entries.filter { $0.kind == .folder }.count, sourceLocation: sourceLocation)
            #expect(record.bytes == entries.reduce(0) { $0 + $1.bytes }, sourceLocation: sourceLocation)
            var weight = 0.0
            for entry in entries {
                if let range = entry.range, let size = entry.size {
                    // The next range of its file: it starts where the last one ended.
                    var known = ranges[entry.path] ?? (size, [0])
                    #expect(known.size == size && known.ends.last == range.offset, "\(entry.path) at \(range.offset)", sourceLocation: sourceLocation)
                    known.ends.append(range.offset + range.length)
                    ranges[entry.path] = known
                    if range.offset == 0 { seen.insert(entry.path) }
                } else if !seen.insert(entry.path).inserted {
                    duplicates.append(entry.path)
                }
                weight += PlanBuilder.weight(of: entry)
                heaviest = max(heaviest, PlanBuilder.weight(of: entry))
            }
            weights.append(weight)
        }
        #expect(duplicates.isEmpty, "paths in two chunks: \(duplicates.prefix(5))", sourceLocation: sourceLocation)
        for (path, file) in ranges {
            #expect(file.ends.last == file.size && file.ends.count > 2, "\(path): ranges end at \(file.ends.suffix(3))", sourceLocation: sourceLocation)
        }
        let split = output.plan.splitFiles ?? []
        #expect(Set(split.map(\.path)) == Set(ranges.keys) && split.count == ranges.count, sourceLocation: sourceLocation)
        for file in split {
            #expect(file.size == ranges[file.path]?.size && file.byteRanges.count == (ranges[file.path]?.ends.count ?? 0) - 1,
                    sourceLocation: sourceLocation)
        }
        #expect(seen == expected, "missing \(expected.subtracting(seen).prefix(5)), unexpected \(seen.subtracting(expected).prefix(5))",
                sourceLocation: sourceLocation)
        let share = weights.reduce(0, +) / Double(chunks)
        for (index, weight) in weights.enumerated() {
            #expect(weight <= share + heaviest, "chunk \(index) weighs \(weight), share \(share)", sourceLocation: sourceLocation)
        }
    }

    @Test("the chunks are exactly the source listing, for 1, 2, 3, 7 and 16 chunks; the same tree plans the same")
    func coverage() async throws {
        let scratch = try TemporaryFolder.make()
        defer { scratch.remove() }
        let root = scratch.path + "/tree"
        let expected = try Self.makeTree(at: root, files: 30_000)
        #expect(expected.count > 30_000)
        // The whole build for 7 chunks, twice (the same tree plans the same); the other counts cut
        // the same listing.
        let first = try await Self.build(root, chunking: .count(7), into: scratch.path + "/again-1")
        try Self.expectCoverage(first, expected: expected, chunks: 7)
        let counts = first.plan.chunks.map { $0.files + $0.folders }
        #expect(counts.filter { $0 > 0 }.count >= 6, "balanced by item count too: \(counts)")
        let others = [1, 2, 3, 16]
        for (chunks, output) in zip(others, try await Self.cuts(root, others.map { .count($0) }, into: scratch.path + "/cuts")) {
            try Self.expectCoverage(output, expected: expected, chunks: chunks)
            // The tree weighs about 37 GiB: the 5 GiB file is larger than a sixteenth (and split
            // into ranges), smaller than a third; one chunk never splits.
            if chunks == 16 { #expect(output.plan.splitFiles?.map(\.path) == ["big.bin"]) }
            if chunks <= 3 { #expect(output.plan.splitFiles == nil) }
        }
        let second = try await Self.build(root, chunking: .count(7), into: scratch.path + "/again-2")
        #expect(first.plan.fingerprint == second.plan.fingerprint)
        #expect(first.plan.chunks == second.plan.chunks)
        for (one, two) in zip(first.chunkFiles, second.chunkFiles) { #expect(try Data(contentsOf: one) == Data(contentsOf: two)) }
        // Any change to the tree changes the fingerprint.
        #expect(FileManager.default.createFile(atPath: root + "/d0/e0/new file", contents: Data("x".utf8)))
        let changed = try await Self.build(root, chunking: .count(7), into: scratch.path + "/again-3")
        #expect(changed.plan.fingerprint != first.plan.fingerprint)
    }

    @Test("a 100,000-entry folder: 16 chunks hold it all, once, and cut it into runs")
    func wideFolder() async throws {
        let scratch = try TemporaryFolder.make()
        defer { scratch.remove() }
        let root = scratch.path + "/tree"
        let expected = try Self.makeTree(at: root, files: 100, bigFolder: 100_000)
        let output = try await Self.build(root, chunking: .count(16), into: scratch.path + "/plan")
        try Self.expectCoverage(output, expected: expected, chunks: 16)
        // The folder is shared out: no chunk holds more than twice its share of the entries.
        let counts = output.plan.chunks.map { $0.files + $0.folders }
        #expect(counts.max()! <= 2 * expected.count / 16, "\(counts)")
    }

    @Test("--chunk-size: as many chunks as the weight needs, and at most 1000 by default")
    func chunkWeight() async throws {
        let scratch = try TemporaryFolder.make()
        defer { scratch.remove() }
        let root = scratch.path + "/tree"
        let expected = try Self.makeTree(at: root, files: 2_000)
        let total = expected.count
        // Every item weighs 1 MiB more than its bytes; the 5 GiB file dominates.
        let outputs = try await Self.cuts(root, [.weight(1 << 30), .weight(1)], into: scratch.path + "/cuts")
        let output = outputs[0]
        let weight = output.plan.chunks.reduce(0.0) { $0 + Double($1.bytes) + Double(($1.files + $1.folders) << 20) }
        #expect(output.plan.chunks.count == Int((weight / Double(1 << 30)).rounded(.up)))
        #expect(output.plan.files + output.plan.folders == total)
        let tiny = outputs[1]
        #expect(tiny.plan.chunks.count == PlanBuilder.defaultMaximumChunks)
        try Self.expectCoverage(tiny, expected: expected, chunks: PlanBuilder.defaultMaximumChunks)
    }

    @Test("--hash-shard: every path in exactly one of N shards, shared out evenly")
    func hashShards() throws {
        let shards = (0..<4).map { HashShard(index: $0, count: 4)! }
        var counts = [0, 0, 0, 0]
        for index in 0..<20_000 {
            let path = "folder \(index % 13)/file-\(index).txt"
            let owners = shards.filter { $0.contains(path) }
            #expect(owners.count == 1)
            counts[owners[0].index] += 1
        }
        for count in counts { #expect((4_500...5_500).contains(count), "\(counts)") }
        #expect(HashShard(parsing: "3/4") == HashShard(index: 3, count: 4))
        for bad in ["4/4", "-1/4", "1/0", "1", "a/b", "1/4/5", " 1/4", "1/ 4", "99999999999/2", ""] { #expect(HashShard(parsing: bad) == nil, "\(bad)") }
        // FNV-1a 64, as documented (the empty string and "a").
        #expect(HashShard.hash("") == 0xcbf2_9ce4_8422_2325)
        #expect(HashShard.hash("a") == 0xaf63_dc4c_8601_ec8c)
    }

    @Test("chunk lines: every name reads back; hostile lines are refused")
    func lines() throws {
        let date = Date(timeIntervalSince1970: 1_795_789_785.383_905_1)
        for name in Self.awkward + ["a/b/c", "ünï/cödé"] {
            for entry in [PlanEntry(kind: .file, path: name, size: 42, modified: date), PlanEntry(kind: .folder, path: name),
                          PlanEntry(kind: .link, path: name, size: nil, modified: nil)] {
                let line = entry.line
                #expect(!line.contains("\n") && !line.contains("\r"))
                #expect(try PlanEntry.parse(Substring(line)) == entry)
            }
            let range = PlanEntry(kind: .range, path: name, size: 10 << 30, modified: date, range: .init(offset: 4 << 30, length: 4 << 30))
            #expect(try PlanEntry.parse(Substring(range.line)) == range)
            #expect(range.line.hasPrefix("r\t10737418240\t1795789785.3839052\t4294967296\t4294967296\t"))
        }
        // Ranges: inside their file, of a known size, non-empty, six fields.
        for line in ["r\t10\t-\t5\t6\ta", "r\t10\t-\t10\t1\ta", "r\t-\t-\t0\t1\ta", "r\t10\t-\t0\t0\ta", "r\t10\t-\t-1\t2\ta",
                     "r\t10\t-\t0\t1", "r\t10\t-\t0\t1\t../a", "r\t9223372036854775807\t-\t9223372036854775806\t9\ta"] {
            #expect(throws: PlanFormatError.self, "\(line)") { try PlanEntry.parse(Substring(line)) }
        }
        let hostile = ["f\t1\t1\t../escape", "f\t1\t1\t/etc/passwd", "f\t1\t1\ta//b", "f\t1\t1\ta/./b", "f\t1\t1\ta/..", "d\t",
                       "f\t1\t1\ta/", "f\t99999999999999999999\t1\ta", "f\t-1\t1\ta", "f\t1\tnan\ta", "f\t1\tinf\ta", "f\t1\t1e400\ta",
                       "f\t1\t1\ta\\x00b", "f\t1\t1\ta\\q", "f\t1\t1\ta\\x4", "f\t1\t1\ta\u{1}b", "x\ta", "f\t1\ta", "d\ta\tb",
                       "f\t1\t1\t" + String(repeating: "a", count: PlanEntry.maximumLineLength), "f\t+1\t1\ta", "f\t 1\t1\ta"]
        for line in hostile {
            #expect(throws: PlanFormatError.self, "\(line.prefix(40))") { try PlanEntry.parse(Substring(line)) }
        }
    }

    @Test("the line reader: any split of lines across reads, the last line without a line feed, and no line longer than allowed")
    func lineReader() throws {
        let scratch = try TemporaryFolder.make()
        defer { scratch.remove() }
        let url = URL(fileURLWithPath: scratch.path + "/lines")
        let lines = (0..<20_000).map { "d\tfolder-\($0)-" + String(repeating: "x", count: $0 % 300) }
        try Data(lines.joined(separator: "\n").utf8).write(to: url)
        #expect(try Self.entries(of: url).map(\.line) == lines)
        try Data(("d\ta\n" + String(repeating: "b", count: PlanEntry.maximumLineLength + 10)).utf8).write(to: url)
        #expect(throws: PlanFormatError.self) { _ = try Self.entries(of: url) }
        try Data([0x64, 0x09, 0xFF, 0xFE, 0x0A]).write(to: url)
        #expect(throws: PlanFormatError.self) { _ = try Self.entries(of: url) }
    }

    @Test("a manifest reads back; an edited, damaged or foreign one is refused")
    func manifest() throws {
        let chunk = TransferPlan.Chunk(index: 0, files: 1, folders: 0, bytes: 3, length: 10, sha256: String(repeating: "a", count: 64))
        let plan = TransferPlan(mode: .sync, source: .init(remote: nil, path: "/src"), destination: .init(remote: "dav", path: "/dst"),
                                options: .init(), chunks: [chunk])
        let data = try plan.encoded()
        // Times keep milliseconds; everything else reads back as it was.
        var decoded = try TransferPlan.decode(data)
        #expect(abs(decoded.created.timeIntervalSince(plan.created)) < 0.001)
        decoded.created = plan.created
        #expect(decoded == plan)
        // Split files read back exactly (their time to the last digit: it is part of the fingerprint).
        let four = (0..<4).map { index in
            var record = chunk
            record.index = index
            return record
        }
        let split = TransferPlan(mode: .copy, source: plan.source, destination: plan.destination, options: .init(), chunks: four,
                                 splitFiles: [.init(path: "big\tfile", size: 10 << 30, modified: Date(timeIntervalSince1970: 1_795_789_785.383_905_1),
                                                    rangeLength: 3 << 30)])
        #expect(split.fingerprint != TransferPlan(mode: .copy, source: plan.source, destination: plan.destination, options: .init(),
                                                  chunks: four).fingerprint)
        #expect(try TransferPlan.decode(try split.encoded()).splitFiles == split.splitFiles)
        #expect(split.splitFiles?[0].byteRanges.map(\.length) == [3 << 30, 3 << 30, 3 << 30, 1 << 30])
        #expect(split.files == 5)
        var shorter = split
        shorter.splitFiles?[0].rangeLength = 10 << 30
        shorter.fingerprint = shorter.computeFingerprint()
        #expect(throws: PlanFormatError.self, "a range as long as the file") { try TransferPlan.decode(try shorter.encoded()) }
        // More ranges than chunks (a hostile manifest asking for billions of them) is refused.
        var many = split
        many.splitFiles?[0].rangeLength = 1 << 30
        many.fingerprint = many.computeFingerprint()
        #expect(throws: PlanFormatError.self, "10 ranges for 4 chunks") { try TransferPlan.decode(try many.encoded()) }
        var text = String(decoding: data, as: UTF8.self)
        text = text.replacingOccurrences(of: "\"bytes\" : 3", with: "\"bytes\" : 4")
        #expect(throws: PlanFormatError.self) { try TransferPlan.decode(Data(text.utf8)) }
        var foreign = plan
        foreign.version = 2
        foreign.fingerprint = foreign.computeFingerprint()
        #expect(throws: PlanFormatError.self) { try TransferPlan.decode(try foreign.encoded()) }
        var misnumbered = plan
        misnumbered.chunks[0].index = 1
        misnumbered.fingerprint = misnumbered.computeFingerprint()
        #expect(throws: PlanFormatError.self) { try TransferPlan.decode(try misnumbered.encoded()) }
        for garbage in ["", "[]", "{}", "null", "{\"format\": \"gateway-plan\"}", String(repeating: "[", count: 100_000)] {
            #expect(throws: PlanFormatError.self) { try TransferPlan.decode(Data(garbage.utf8)) }
        }
    }

    @Test("workers: every chunk run, a rerun copies nothing, a sync deletes only at the end, check finds what differs")
    func runChunks() async throws {
        let scratch = try TemporaryFolder.make()
        defer { scratch.remove() }
        let root = scratch.path + "/tree"
        try FileManager.default.createDirectory(atPath: root + "/a/b", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/empty", withIntermediateDirectories: true)
        for index in 0..<60 { try Bytes.pattern(1000 + index, seed: UInt64(index)).write(to: URL(fileURLWithPath: root + "/a/f\(index)")) }
        for name in Self.awkward { try Data(name.utf8).write(to: URL(fileURLWithPath: root + "/a/b/" + name)) }
        let copy = scratch.path + "/tree-copy"
        try FileManager.default.createDirectory(atPath: copy + "/stale", withIntermediateDirectories: true)
        try Data("extra".utf8).write(to: URL(fileURLWithPath: copy + "/stale/old"))
        try Data("extra".utf8).write(to: URL(fileURLWithPath: copy + "/old"))

        let output = try await Self.build(root, chunking: .count(5), mode: .sync, into: scratch.path + "/work")
        let local = try LocalFileProvider(name: "local", root: "/")
        let store = PlanStore(provider: local, path: scratch.path + "/plan")
        try await store.create(output)
        let plan = try await store.manifest()
        #expect(plan.fingerprint == output.plan.fingerprint && plan.chunks == output.plan.chunks)
        await expectFailure(.alreadyExists) { try await store.create(output) }
        let (source, destination) = try Self.endpoints(root, destination: copy)
        var options = CopyOptions()
        options.useTrash = false
        let engine = CopyEngine(options: options)
        var copied = 0
        for index in plan.chunks.indices {
            let chunk = try await store.fetchChunk(index, of: plan, to: URL(fileURLWithPath: scratch.path + "/chunk-\(index)"))
            let summary = try await engine.run(.sync, chunk: chunk, from: source, to: destination)
            #expect(summary.failed == 0 && summary.deleted == 0)
            copied += summary.copied
            // The extras stay until the plan is finished.
            #expect(FileManager.default.fileExists(atPath: copy + "/old"))
        }
        #expect(copied == 60 + Self.awkward.count)
        #expect(FileManager.default.fileExists(atPath: copy + "/empty"))
        let again = try await engine.run(.sync, chunk: PlanChunk(file: URL(fileURLWithPath: scratch.path + "/chunk-2")), from: source, to: destination)
        #expect(again.copied == 0 && again.skipped == plan.chunks[2].files)
        #expect(try await engine.extraFiles(source: source, destination: destination) == ["old", "stale/old"])
        let finish = try await engine.finishPlan(.sync, from: source, to: destination)
        #expect(finish.deleted == 2)
        let report = try await engine.check(source: source, destination: destination)
        #expect(report.isIdentical, "\(report.missing) \(report.extra) \(report.different)")
        // A chunk's check: a changed file is different, a removed one missing.
        try Data("changed!".utf8).write(to: URL(fileURLWithPath: copy + "/a/b/" + Self.awkward[0]))
        try FileManager.default.removeItem(atPath: copy + "/a/b/" + Self.awkward[1])
        var missing: [String] = []
        var different: [String] = []
        for index in plan.chunks.indices {
            let part = try await engine.check(chunk: PlanChunk(file: URL(fileURLWithPath: scratch.path + "/chunk-\(index)")),
                                              source: source, destination: destination)
            missing += part.missing
            different += part.different
        }
        #expect(missing == ["a/b/" + Self.awkward[1]])
        #expect(different == ["a/b/" + Self.awkward[0]])
    }

    @Test("a file larger than a chunk: chunks write its ranges in any order, finalize moves it into place; a rerun, a destination that changed, a lost partial file, a changed source")
    func splitFile() async throws {
        let scratch = try TemporaryFolder.make()
        defer { scratch.remove() }
        let root = scratch.path + "/tree", copy = scratch.path + "/tree-copy"
        try FileManager.default.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        let big = Bytes.pattern(24 << 20, seed: 7)
        let bigURL = URL(fileURLWithPath: root + "/sub/big.bin"), copiedURL = URL(fileURLWithPath: copy + "/sub/big.bin")
        try big.write(to: bigURL)
        for index in 0..<3 { try Data("small \(index)".utf8).write(to: URL(fileURLWithPath: root + "/s\(index)")) }
        let local = try LocalFileProvider(name: "local", root: "/")
        let (source, destination) = try Self.endpoints(root, destination: copy)
        var options = CopyOptions()
        options.useTrash = false
        let engine = CopyEngine(options: options)

        func makePlan(_ name: String) async throws -> (TransferPlan, PlanStore) {
            let output = try await Self.build(root, chunking: .count(4), into: scratch.path + "/work-" + name)
            let store = PlanStore(provider: local, path: scratch.path + "/plan-" + name)
            try await store.create(output)
            return (try await store.manifest(), store)
        }
        func run(_ plan: TransferPlan, _ store: PlanStore, chunk index: Int) async throws -> CopySummary {
            let chunk = try await store.fetchChunk(index, of: plan, to: URL(fileURLWithPath: scratch.path + "/chunk-\(plan.fingerprint.prefix(8))-\(index)"))
            return try await engine.run(.copy, chunk: chunk, from: source, to: destination)
        }
        func runAll(_ plan: TransferPlan, _ store: PlanStore, order: [Int] = [0, 1, 2, 3]) async throws -> [RangeOutcome] {
            var outcomes: [RangeOutcome] = []
            for index in order {
                let summary = try await run(plan, store, chunk: index)
                #expect(summary.failed == 0, "chunk \(index)")
                outcomes += summary.ranges
            }
            return outcomes
        }
        func partials() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: copy + "/sub").filter { $0.hasSuffix(".partial") } }
        func finalize(_ plan: TransferPlan, _ ranges: [RangeOutcome]) async throws -> CopySummary {
            try await engine.finishPlan(.copy, from: source, to: destination, splitFiles: plan.splitFiles ?? [], rangeKey: plan.rangeKey, ranges: ranges)
        }
        func damageCopy() throws {
            let handle = try FileHandle(forWritingTo: copiedURL)
            try handle.truncate(atOffset: 1)
            try handle.close()
        }

        // The tree weighs 24 MiB + 6 items: shares of 7.5 MiB, ranges of 8 MiB over three chunks at least.
        let (plan, store) = try await makePlan("first")
        let split = try #require(plan.splitFiles)
        #expect(split.map(\.path) == ["sub/big.bin"] && split[0].byteRanges.map(\.length) == [8 << 20, 8 << 20, 8 << 20])
        #expect(plan.files == 4 && plan.bytes == Int64(big.count) + 21)
        #expect(plan.chunks.filter { $0.bytes >= 8 << 20 }.count == 3, "\(plan.chunks.map(\.bytes))")
        let outcomes = try await runAll(plan, store, order: [3, 2, 1, 0])
        #expect(outcomes.count == 3 && outcomes.allSatisfy { $0.written })
        #expect(!FileManager.default.fileExists(atPath: copiedURL.path), "the file takes its name only at finalize")
        #expect(try partials().count == 1)
        // A rerun of a chunk writes its range again: nothing changes.
        #expect(try await run(plan, store, chunk: 1).failed == 0)
        let done = try await finalize(plan, outcomes)
        #expect(done.failed == 0 && done.copied == 1 && done.bytes == 0, "finalize had no range left to write")
        #expect(try Data(contentsOf: copiedURL) == big)
        #expect(try partials().isEmpty)
        let times = try [bigURL, copiedURL].map { try FileManager.default.attributesOfItem(atPath: $0.path)[.modificationDate] as? Date }
        // The plan carries times as seconds since 1970 in a Double: exact to well under a microsecond.
        #expect(abs((times[0]?.timeIntervalSince1970 ?? 0) - (times[1]?.timeIntervalSince1970 ?? -1)) < 0.000_01, "\(times)")
        #expect(try await engine.check(source: source, destination: destination).isIdentical)

        // A new plan of the same tree: every range finds the file up to date; nothing is written.
        let (again, againStore) = try await makePlan("again")
        let unchanged = try await runAll(again, againStore)
        #expect(unchanged.count == 3 && unchanged.allSatisfy { !$0.written })
        #expect(try partials().isEmpty)
        let quiet = try await finalize(again, unchanged)
        #expect(quiet.copied == 0 && quiet.skipped == 1 && quiet.failed == 0)

        // The destination changes after the chunk of the first range found it up to date: the
        // later chunks write theirs, and finalize writes the first.
        let (third, thirdStore) = try await makePlan("third")
        var mixed: [RangeOutcome] = []
        for index in third.chunks.indices {
            let summary = try await run(third, thirdStore, chunk: index)
            mixed += summary.ranges
            if summary.ranges.contains(where: { $0.offset == 0 }) { try damageCopy() }
        }
        #expect(mixed.filter { $0.written }.map { $0.offset } == [8 << 20, 16 << 20])
        let filled = try await finalize(third, mixed)
        #expect(filled.failed == 0 && filled.copied == 1 && filled.bytes == 8 << 20)
        #expect(try Data(contentsOf: copiedURL) == big)

        // The partial file is lost after the chunks wrote to it: finalize copies the file whole.
        try damageCopy()
        let (fourth, fourthStore) = try await makePlan("fourth")
        let lost = try await runAll(fourth, fourthStore)
        #expect(lost.allSatisfy { $0.written })
        for name in try partials() { try FileManager.default.removeItem(atPath: copy + "/sub/" + name) }
        let notices = Mutex<[String]>([])
        let whole = try await engine.finishPlan(.copy, from: source, to: destination, splitFiles: fourth.splitFiles ?? [],
                                                rangeKey: fourth.rangeKey, ranges: lost) { event in
            if case .notice(let text) = event { notices.withLock { $0.append(text) } }
        }
        #expect(whole.failed == 0 && whole.copied == 1 && whole.bytes == Int64(big.count))
        #expect(notices.withLock { $0 }.contains { $0.contains("sub/big.bin") && $0.contains("gone") }, "\(notices.withLock { $0 })")
        #expect(try Data(contentsOf: copiedURL) == big)

        // The source changes after planning: its ranges fail, and nothing takes the name.
        try damageCopy()
        let (fifth, fifthStore) = try await makePlan("fifth")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: bigURL.path)
        var failures = 0
        for index in fifth.chunks.indices { failures += try await run(fifth, fifthStore, chunk: index).failed }
        #expect(failures == 3)
        #expect(try Data(contentsOf: copiedURL).count == 1)
    }

    @Test("a chunk file that changed, and a consistent plan whose chunk climbs out of the destination, are refused")
    func hostileChunks() async throws {
        let scratch = try TemporaryFolder.make()
        defer { scratch.remove() }
        let root = scratch.path + "/tree"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/file"))
        let output = try await Self.build(root, chunking: .count(1), into: scratch.path + "/work")
        let local = try LocalFileProvider(name: "local", root: "/")
        let store = PlanStore(provider: local, path: scratch.path + "/plan")
        try await store.create(output)
        let plan = try await store.manifest()
        // Changed after planning: refused before anything runs.
        let chunkPath = scratch.path + "/plan/chunks/000000.tsv"
        try Data("f\t1\t-\tother\n".utf8).write(to: URL(fileURLWithPath: chunkPath))
        await #expect(throws: PlanFormatError.self) {
            _ = try await store.fetchChunk(0, of: plan, to: URL(fileURLWithPath: scratch.path + "/fetched"))
        }
        try FileManager.default.removeItem(atPath: chunkPath)
        await #expect(throws: PlanFormatError.self) {
            _ = try await store.fetchChunk(0, of: plan, to: URL(fileURLWithPath: scratch.path + "/fetched-2"))
        }
        await #expect(throws: PlanFormatError.self) {
            _ = try await store.fetchChunk(1, of: plan, to: URL(fileURLWithPath: scratch.path + "/fetched-3"))
        }
        // A hostile plan, consistent with itself: the worker refuses the line, writes nothing.
        let evil = Data("f\t1\t-\t../outside\n".utf8)
        let evilURL = URL(fileURLWithPath: scratch.path + "/evil.tsv")
        try evil.write(to: evilURL)
        let (source, destination) = try Self.endpoints(root, destination: scratch.path + "/dest/inner")
        await #expect(throws: PlanFormatError.self) {
            _ = try await CopyEngine().run(.copy, chunk: PlanChunk(file: evilURL), from: source, to: destination)
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/dest/outside"))
    }
}

/// A Local remote whose first `MKCOL` of each folder answers 423 Locked, as `rclone serve webdav`
/// does to one of two requests making the same folder at once (the workers of a plan race to make
/// shared folders).
final class LockedOnceProvider: LocalReadWriteView, FileProviderOperations, @unchecked Sendable {
    override class var type: String { "locked-once" }
    private let refused = Locked<Set<String>>([])

    /// Folders refused once so far.
    var refusals: Int { refused.value.count }

    func createFolder(path: String, withIntermediateDirectories: Bool) async throws {
        var first = false
        refused.mutate { first = $0.insert(path).inserted }
        if first { throw FileProviderHTTPError(statusCode: 423, path: path, method: "MKCOL") }
        try await inner.createFolder(path: path, withIntermediateDirectories: withIntermediateDirectories)
    }
    func moveItem(path: String, to destination: String, overwrite: Bool) async throws {
        try await inner.moveItem(path: path, to: destination, overwrite: overwrite)
    }
    func copyItem(path: String, to destination: String, overwrite: Bool, progress: TransferProgress?) async throws {
        try await inner.copyItem(path: path, to: destination, overwrite: overwrite, progress: progress)
    }
    func removeItem(path: String, recursive: Bool) async throws { try await inner.removeItem(path: path, recursive: recursive) }
    func uploadItem(from localURL: URL, to path: String, overwrite: Bool, progress: TransferProgress?) async throws {
        try await inner.uploadItem(from: localURL, to: path, overwrite: overwrite, progress: progress)
    }
    func downloadItem(path: String, to localURL: URL, overwrite: Bool, progress: TransferProgress?) async throws {
        try await inner.downloadItem(path: path, to: localURL, overwrite: overwrite, progress: progress)
    }
    func setModificationDate(_ date: Date, path: String) async throws { try await inner.setModificationDate(date, path: path) }
}

extension PlanTests {
    @Test("a folder the server refuses once with 423 Locked (two workers making it at once) is made on a retry")
    func lockedFolder() async throws {
        let scratch = try TemporaryFolder.make()
        defer { scratch.remove() }
        let root = scratch.path + "/tree"
        try FileManager.default.createDirectory(atPath: root + "/a/b", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/empty", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/a/b/file"))
        let output = try await Self.build(root, chunking: .count(1), into: scratch.path + "/work")
        try FileManager.default.createDirectory(atPath: scratch.path + "/dest", withIntermediateDirectories: true)
        let destination = LockedOnceProvider(try LocalFileProvider(name: "dest", root: scratch.path + "/dest"))
        let source = try LocalFileProvider(name: "local", root: "/")
        var events: [String] = []
        let lock = Locked<[String]>([])
        var options = CopyOptions(retryDelay: .milliseconds(1))
        options.useTrash = false
        let summary = try await CopyEngine(options: options).run(.copy, chunk: PlanChunk(file: output.chunkFiles[0]),
                                                                 from: TransferEndpoint(provider: source, path: root),
                                                                 to: TransferEndpoint(provider: destination, path: "/copy")) { event in
            if case .retrying(let path, _, _, let error) = event { lock.mutate { $0.append("\(path): \(error)") } }
        }
        events = lock.value
        #expect(summary.failed == 0 && summary.copied == 1, "\(summary)")
        #expect(destination.refusals >= 3, "the root, a, a/b and empty were each refused once")
        #expect(events.count == destination.refusals && events.allSatisfy { $0.contains("locked") }, "\(events)")
        #expect(FileManager.default.fileExists(atPath: scratch.path + "/dest/copy/a/b/file"))
        #expect(FileManager.default.fileExists(atPath: scratch.path + "/dest/copy/empty"))
    }
}
