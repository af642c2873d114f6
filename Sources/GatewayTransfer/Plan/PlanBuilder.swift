public import Foundation
import GatewayCore

/// Makes a plan: lists the source once, then cuts the listing into chunks balanced by bytes and
/// item count, written as chunk files in a local folder.
///
/// Memory stays flat whatever the tree's size: the listing is streamed to a spool file on disk
/// (first pass, which also sums the work), then read back and cut (second pass). Chunks are runs of
/// the listing in walk order, so a folder's files mostly share a chunk and a worker lists each
/// destination folder once. Each item weighs its bytes plus ``itemWeight`` (the cost of its
/// requests, about what 1 MiB takes to move); chunk `k` takes the items whose middle falls in the
/// `k`-th equal share of the total weight.
///
/// A file heavier than a share is cut into byte ranges of about a share each (``PlanEntry/Kind/range``
/// lines, listed in the manifest's ``TransferPlan/splitFiles``), so one file cannot be the long
/// pole, where the destination takes ranges from several processes (``FileProviderRangedWrite``)
/// and the run copies (not for `check`, nor `--checksum`, which compare whole files). Elsewhere it
/// stays whole, and some chunks may then be empty.
public struct PlanBuilder: Sendable {
    /// How many chunks to cut.
    public enum Chunking: Sendable, Hashable {
        /// Exactly this many chunks (some may be empty).
        case count(Int)
        /// As many chunks as it takes for each to weigh about this much (bytes, each item counting
        /// ``PlanBuilder/itemWeight`` more), at most ``PlanBuilder/maximumChunks``.
        case weight(Int64)
    }

    /// What an item weighs beyond its bytes.
    public static let itemWeight: Int64 = 1 << 20
    /// The default weight of a chunk (`gateway plan` without `--chunks` or `--chunk-size`).
    public static let defaultChunkWeight: Int64 = 4 << 30
    /// The most chunks a plan cuts without `--chunks` (Slurm's default `MaxArraySize` is 1001, so
    /// array indices 0 to 1000).
    public static let defaultMaximumChunks = 1000
    /// The most chunks a plan may have.
    public static let maximumChunks = 100_000
    /// The smallest range a split file is cut into: S3's smallest part but the last (5 MiB), so
    /// that object storage can join the ranges on the server.
    public static let minimumRange: Int64 = 5 << 20

    /// The run the plan is for.
    public var mode: PlanMode
    /// The source, as the engine reads it, and as the manifest names it.
    public var source: TransferEndpoint
    public var sourceLocation: TransferPlan.Location
    /// The destination (its trash is left out of the plan) and its name in the manifest.
    public var destination: TransferEndpoint
    public var destinationLocation: TransferPlan.Location
    public var options: TransferPlan.Options
    public var chunking: Chunking

    /// A builder.
    public init(mode: PlanMode, source: TransferEndpoint, sourceLocation: TransferPlan.Location, destination: TransferEndpoint,
                destinationLocation: TransferPlan.Location, options: TransferPlan.Options, chunking: Chunking) {
        self.mode = mode
        self.source = source
        self.sourceLocation = sourceLocation
        self.destination = destination
        self.destinationLocation = destinationLocation
        self.options = options
        self.chunking = chunking
    }

    /// Whether files heavier than a chunk's share may be split into ranges (see the type's
    /// description): the destination adopts ``FileProviderRangedWrite``; ``build(in:onProgress:onLeftOut:)``
    /// also asks it whether its server takes them (``destinationTakesRanges()``).
    public var splitsLargeFiles: Bool {
        mode != .check && !options.checksum && destination.provider is any FileProviderRangedWrite
    }

    /// Whether the destination takes a file's ranges from several processes: it may
    /// (``splitsLargeFiles``), and says it can below the destination path (a server that must be
    /// tried is tried once; one that fails the question is taken as unable).
    public func destinationTakesRanges() async -> Bool {
        guard splitsLargeFiles, let writer = destination.provider as? any FileProviderRangedWrite else { return false }
        return (try? await writer.acceptsRangedWrites(below: destination.path)) ?? false
    }

    /// What a build made: the manifest and its chunk files (`chunks[k]` is chunk `k`'s).
    public struct Output: Sendable {
        public var plan: TransferPlan
        public var chunkFiles: [URL]
    }

    /// The source's listing, spooled to a local file: the first pass of a build.
    public struct Listing: Sendable {
        /// The spool file: one chunk line per item, in walk order.
        public var file: URL
        /// Items in it.
        public var items: Int
        /// Their total weight (see ``PlanBuilder/itemWeight``).
        public var weight: Double
        /// Items left out (links to folders, devices, sockets).
        public var leftOut: Int
    }

    /// Lists the source and writes the chunk files into `folder` (which must exist and be empty of
    /// chunk files). `onProgress` is told the items listed so far, every 10,000; `onLeftOut` each
    /// item the plan leaves out (relative path, why).
    public func build(in folder: URL, onProgress: @escaping @Sendable (Int) -> Void = { _ in },
                      onLeftOut: @escaping @Sendable (String, String) -> Void = { _, _ in }) async throws -> Output {
        let listing = try await list(into: folder.appendingPathComponent("listing.spool"), onProgress: onProgress, onLeftOut: onLeftOut)
        defer { try? FileManager.default.removeItem(at: listing.file) }
        return try cut(listing, into: folder, splitting: await destinationTakesRanges())
    }

    /// First pass: lists the source into the spool file `spool`.
    public func list(into spool: URL, onProgress: @escaping @Sendable (Int) -> Void = { _ in },
                     onLeftOut: @escaping @Sendable (String, String) -> Void = { _, _ in }) async throws -> Listing {
        let root = try await source.provider.attributesOfItem(path: source.path)
        guard root.isDirectory else {
            throw FileProviderError.invalidPath(path: source.path, reason: "a plan needs a folder as its source (copy a file directly)")
        }
        try Transfer.refuseNesting(source: source, destination: destination)
        var writer = try BufferedFileWriter(creating: spool)
        var totalWeight: Double = 0
        var items = 0
        var leftOut = 0
        var filter = await CopyEngine.TreeFilter([source.provider])
        var landing = await CopyEngine.TreeFilter([destination.provider])
        for try await item in source.provider.walk(path: source.path) {
            try Task.checkCancellation()
            guard let relative = RemotePath.relative(item.path, to: source.path), !relative.isEmpty else { continue }
            if filter.skips(item, relative: relative, landingIn: destination.path, on: &landing) { continue }
            guard let entry = PlanEntry(item, relative: relative) else {
                leftOut += 1
                onLeftOut(relative, item.isLinkToFolder ? "symbolic link to a folder is not followed" : "not a regular file")
                continue
            }
            try writer.write(entry.line + "\n")
            totalWeight += Self.weight(of: entry)
            items += 1
            if items % 10_000 == 0 { onProgress(items) }
        }
        try writer.close()
        onProgress(items)
        return Listing(file: spool, items: items, weight: totalWeight, leftOut: leftOut)
    }

    /// Second pass: cuts a listing into chunk files in `folder`, and makes the manifest; large files
    /// are split into ranges when `splitting` (by default, when ``splitsLargeFiles``).
    public func cut(_ listing: Listing, into folder: URL, splitting: Bool? = nil) throws -> Output {
        let count: Int
        switch chunking {
        case .count(let wanted):
            count = min(max(1, wanted), Self.maximumChunks)
        case .weight(let weight):
            count = min(Self.defaultMaximumChunks, max(1, Int((listing.weight / Double(max(1, weight))).rounded(.up))))
        }
        let share = max(listing.weight / Double(count), 1)
        // Ranges of whole MiBs, about a share each.
        let unit: Int64 = 1 << 20
        let rangeLength = max(Self.minimumRange, (Int64(min(share, 1e18)) + unit - 1) / unit * unit)
        let splits = (splitting ?? splitsLargeFiles) && count > 1
        var splitFiles: [TransferPlan.SplitFile] = []
        var chunks: [TransferPlan.Chunk] = []
        var files: [URL] = []
        var current: ChunkWriter?
        var done: Double = 0
        var reader = try LineReader(file: listing.file)
        func place(_ entry: PlanEntry, line: Substring) throws {
            let weight = Self.weight(of: entry)
            let target = min(count - 1, Int((done + weight / 2) / share))
            done += weight
            while current?.index != target {
                if let finished = try current?.close() { chunks.append(finished) }
                let index = chunks.count
                let url = folder.appendingPathComponent(PlanLayout.chunkFile(index))
                files.append(url)
                current = try ChunkWriter(index: index, url: url)
            }
            try current?.add(entry, line: line)
        }
        while let line = try reader.next() {
            let entry = try PlanEntry.parse(line)
            guard splits, entry.kind == .file, let size = entry.size, size > rangeLength else {
                try place(entry, line: line)
                continue
            }
            let split = TransferPlan.SplitFile(path: entry.path, size: size, modified: entry.modified, rangeLength: rangeLength)
            for range in split.byteRanges {
                var piece = entry
                piece.kind = .range
                piece.range = range
                try place(piece, line: Substring(piece.line))
            }
            splitFiles.append(split)
        }
        if let finished = try current?.close() { chunks.append(finished) }
        while chunks.count < count {
            let url = folder.appendingPathComponent(PlanLayout.chunkFile(chunks.count))
            files.append(url)
            var empty = try ChunkWriter(index: chunks.count, url: url)
            chunks.append(try empty.close())
        }
        let plan = TransferPlan(mode: mode, source: sourceLocation, destination: destinationLocation, options: options,
                                leftOut: listing.leftOut, chunks: chunks, splitFiles: splitFiles)
        return Output(plan: plan, chunkFiles: files)
    }

    /// What an entry weighs: its bytes plus ``itemWeight``; a range, its bytes and its share of
    /// its file's ``itemWeight`` (so a split file weighs what it did whole).
    static func weight(of entry: PlanEntry) -> Double {
        guard let range = entry.range, let size = entry.size, size > 0 else { return Double(entry.bytes) + Double(itemWeight) }
        return Double(range.length) * (1 + Double(itemWeight) / Double(size))
    }
}

/// One chunk file being written: its lines, counts and SHA-256.
private struct ChunkWriter {
    let index: Int
    var writer: BufferedFileWriter
    var hasher = ContentHasher(.sha256)
    var files = 0
    var folders = 0
    var bytes: Int64 = 0
    var length: Int64 = 0

    init(index: Int, url: URL) throws {
        self.index = index
        writer = try BufferedFileWriter(creating: url)
    }

    mutating func add(_ entry: PlanEntry, line: Substring) throws {
        let data = Data((line + "\n").utf8)
        hasher.update(data)
        length += Int64(data.count)
        try writer.write(data)
        switch entry.kind {
        case .folder: folders += 1
        case .file, .link:
            files += 1
            bytes = bytes.saturatingAdding(entry.size ?? 0)
        case .range:
            // The file counts once, in the manifest's split files; its bytes where they move.
            bytes = bytes.saturatingAdding(entry.bytes)
        }
    }

    mutating func close() throws -> TransferPlan.Chunk {
        try writer.close()
        return TransferPlan.Chunk(index: index, files: files, folders: folders, bytes: bytes, length: length, sha256: hasher.finalize())
    }
}

/// Writes a new local file through a 1 MiB buffer, flushed on ``close()``.
struct BufferedFileWriter {
    private let handle: FileHandle
    private var buffer = Data()

    init(creating url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError.posix(errno == 0 ? EACCES : errno, path: url.path, remote: "local", writing: true)
        }
        handle = try FileHandle(forWritingTo: url)
        buffer.reserveCapacity(1 << 20)
    }

    mutating func write(_ text: String) throws {
        try write(Data(text.utf8))
    }

    mutating func write(_ data: Data) throws {
        buffer.append(data)
        if buffer.count >= 1 << 20 { try flush() }
    }

    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func close() throws {
        try flush()
        try handle.close()
    }
}
