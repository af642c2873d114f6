public import GatewayCore

extension CopyEngine {
    /// Runs one chunk of a plan (`gateway copy --plan P --shard K`): the chunk's folders are made
    /// and its files copied (or moved) from `source` to `destination`, with the usual skip rules,
    /// so a rerun transfers only what is still missing. The source is not listed; each destination
    /// folder is listed once, as in a walked run. A sync's deletions and a move's removal of the
    /// emptied source folders wait for ``finishPlan(_:from:to:onEvent:)``.
    public func run(_ mode: CopyMode, chunk: PlanChunk, from source: TransferEndpoint, to destination: TransferEndpoint,
                    progress: TransferProgress? = nil,
                    onEvent: @escaping @Sendable (CopyEvent) -> Void = { _ in }) async throws -> CopySummary {
        try await measured(progress: progress, onEvent: onEvent) { state in
            if let notice = checksumNotice(source, destination) { state.event(.notice(notice)) }
            try await runTree(mode, feed: .chunk(chunk), from: source, to: destination, progress: progress, state: state)
        }
    }

    /// Compares one chunk's files with the destination (`gateway check --plan P --shard K`). The
    /// report has no extras: ``extraFiles(source:destination:)`` finds those once, at the end.
    public func check(chunk: PlanChunk, source: TransferEndpoint, destination: TransferEndpoint) async throws -> CheckReport {
        try await compareFiles(source: source, destination: destination) { queue in
            var entries = try chunk.entries()
            while let entry = try entries.next() {
                try Task.checkCancellation()
                // A split file is compared once, as a whole (check plans split nothing).
                guard entry.kind != .folder, entry.range.map({ $0.offset == 0 }) ?? true else { continue }
                await queue.send((entry.item(at: try RemotePath.join(source.path, entry.path)), entry.path))
            }
        }
    }

    /// What finishes a planned run once every chunk is done: first the plan's split files are
    /// moved into place (`splitFiles`, whose partial files are named by `rangeKey`, with the
    /// `ranges` the chunks' markers recorded); then a sync deletes what the destination has and the
    /// source lacks, a move removes the source folders it emptied (neither when anything failed:
    /// the caller checks the chunks first); a copy has nothing more to do.
    public func finishPlan(_ mode: CopyMode, from source: TransferEndpoint, to destination: TransferEndpoint,
                           splitFiles: [TransferPlan.SplitFile] = [], rangeKey: String = "", ranges: [RangeOutcome] = [],
                           onEvent: @escaping @Sendable (CopyEvent) -> Void = { _ in }) async throws -> CopySummary {
        try await measured(onEvent: onEvent) { state in
            if !splitFiles.isEmpty {
                await assemble(splitFiles, key: rangeKey, outcomes: ranges, mode: mode, from: source, to: destination, state: state)
                try Task.checkCancellation()
            }
            try await finish(mode, from: source, to: destination, state: state)
        }
    }

    /// The files the destination has and the source lacks, sorted (with ``CopyOptions/hashShard``,
    /// only those of the shard): what `check` reports as extra.
    public func extraFiles(source: TransferEndpoint, destination: TransferEndpoint) async throws -> [String] {
        try await findExtraFiles(source: source, destination: destination).extra.sorted()
    }

    /// Feeds a chunk's entries to the checkers: each folder made where missing (and each file's
    /// parent, which another chunk may hold), each file queued.
    func feed(_ chunk: PlanChunk, from source: TransferEndpoint, to destination: TransferEndpoint, target: (any FileProviderOperations)?,
              rootExisted: Bool, index: FolderIndex, checks: WorkQueue<Job>, progress: TransferProgress?, state: RunState) async throws {
        var folders = FolderEnsurer(rootFresh: false)
        if !rootExisted {
            // Another worker may make it at the same time: making a folder that exists succeeds.
            guard await makeFolder(destination.path, relative: "", on: target, state: state) else { return }
            folders = FolderEnsurer(rootFresh: true)
        }
        var entries = try chunk.entries()
        while let entry = try entries.next() {
            try Task.checkCancellation()
            switch entry.kind {
            case .folder:
                _ = try await folders.ensure(entry.path, engine: self, destination: destination, target: target, index: index, state: state)
            case .file, .link, .range:
                let parent = entry.path.lastIndex(of: "/").map { String(entry.path[..<$0]) } ?? ""
                let parentFresh = try await folders.ensure(parent, engine: self, destination: destination, target: target, index: index, state: state)
                let item = entry.item(at: try RemotePath.join(source.path, entry.path))
                progress?.addToTotals(bytes: entry.bytes, files: entry.range == nil ? 1 : 0)
                await checks.send(Job(source: item, relative: entry.path, freshFolder: parentFresh, range: entry.range, rangeKey: chunk.rangeKey))
            }
        }
    }
}

/// The destination folders a chunk's run has made sure of: each looked up once (through the
/// folder index) and made when missing, its parents first.
private struct FolderEnsurer {
    /// Folders known to exist (relative paths; `""` is the destination itself).
    private var ensured: Set<String> = [""]
    /// Those this run made (nothing in them needs looking up).
    private var fresh: Set<String> = []

    init(rootFresh: Bool) {
        if rootFresh { fresh.insert("") }
    }

    /// Makes sure the folder at `relative` exists; `true` when this run made it.
    mutating func ensure(_ relative: String, engine: CopyEngine, destination: TransferEndpoint, target: (any FileProviderOperations)?,
                         index: FolderIndex, state: RunState) async throws -> Bool {
        if ensured.contains(relative) { return fresh.contains(relative) }
        let parent = relative.lastIndex(of: "/").map { String(relative[..<$0]) } ?? ""
        let parentFresh = try await ensure(parent, engine: engine, destination: destination, target: target, index: index, state: state)
        ensured.insert(relative)
        if !parentFresh, let existing = try await index.item(at: relative), existing.isDirectory || existing.isLinkToFolder {
            return false
        }
        let path = try RemotePath.join(destination.path, relative)
        guard await engine.makeFolder(path, relative: relative, on: target, state: state) else { return false }
        fresh.insert(relative)
        return true
    }
}
