public import GatewayCore

/// The copy engine: `copy`, `move` and `sync` of a file or a tree between any two providers, and
/// `check`.
///
/// A run is a pipeline that overlaps listing and transferring: one walker lists the source (parents
/// before children, creating destination folders as it goes), `checkers` tasks look up each file at
/// the destination and decide, and `transfers` tasks copy, each file streamed from the source's
/// read stream into the destination's atomic write (or server-side within one remote). Bounded
/// queues between the stages keep memory flat for trees of any size. Transient failures are
/// retried with exponential back-off; permanent ones fail that file at once. Cancel the calling
/// task to stop: temporary files are removed by the providers.
public struct CopyEngine: Sendable {
    /// The options of every run.
    public var options: CopyOptions
    /// The threads the transfers run on, shared by this engine's runs: they may block, so the
    /// providers' small requests and file reads run right on them, without a hand-off to another
    /// thread per request. Their stacks are 1 MiB, as any task code (parsing, hashing) runs there.
    private let executor = BlockingIOExecutor(stackSize: 1 << 20)

    /// Creates an engine.
    public init(options: CopyOptions = CopyOptions()) {
        self.options = options
    }

    /// A file to compare and maybe copy.
    struct Job: Sendable {
        var source: FileObject
        var relative: String
        /// The destination folder was just created: no need to look the file up.
        var freshFolder: Bool
        /// A plan's range of a split file (then ``source`` is the whole file), and the key of its
        /// partial file (``TransferPlan/rangeKey``).
        var range: PlanEntry.ByteRange? = nil
        var rangeKey: String? = nil
    }

    /// Runs `mode` from `source` to `destination` (a file to a file path, or a folder's contents into a
    /// folder), reporting every step to `onEvent`. `progress` is finished when the run ends, so its
    /// ``TransferProgress/snapshots(every:)`` sequences end with it.
    public func run(_ mode: CopyMode, from source: TransferEndpoint, to destination: TransferEndpoint,
                    progress: TransferProgress? = nil,
                    onEvent: @escaping @Sendable (CopyEvent) -> Void = { _ in }) async throws -> CopySummary {
        try await measured(progress: progress, onEvent: onEvent) { state in
            if let notice = checksumNotice(source, destination) { state.event(.notice(notice)) }
            let root = try await source.provider.attributesOfItem(path: source.path)
            if root.isDirectory {
                try Transfer.refuseNesting(source: source, destination: destination)
                try await runTree(mode, feed: .walk, from: source, to: destination, progress: progress, state: state)
            } else {
                let existing = try await destination.provider.itemIfPresent(path: destination.path)
                if existing == nil, !options.dryRun, let target = destination.provider as? any FileProviderOperations {
                    let parent = RemotePath.parent(of: destination.path)
                    if try await destination.provider.itemIfPresent(path: parent) == nil {
                        try await target.createFolder(path: parent, withIntermediateDirectories: true)
                    }
                }
                let job = Job(source: root, relative: root.name, freshFolder: existing == nil)
                await process(job, mode: mode, destinationPath: destination.path, from: source, to: destination,
                              existing: existing, progress: progress, state: state)
            }
        }
    }

    /// Runs `body` with a new run state, and returns its summary with the wall time; `progress`
    /// is finished when it ends.
    func measured(progress: TransferProgress? = nil, onEvent: @escaping @Sendable (CopyEvent) -> Void,
                  _ body: (RunState) async throws -> Void) async throws -> CopySummary {
        defer { progress?.finish() }
        let clock = ContinuousClock()
        let start = clock.now
        let state = RunState(onEvent: onEvent, dryRun: options.dryRun)
        try await body(state)
        var summary = state.summary
        summary.elapsed = clock.now - start
        summary.dryRun = options.dryRun
        return summary
    }

    /// The same run, with its events as an `AsyncSequence`. Consume the events: they are buffered
    /// until read.
    public func start(_ mode: CopyMode, from source: TransferEndpoint, to destination: TransferEndpoint,
                      progress: TransferProgress? = nil) -> (events: AsyncStream<CopyEvent>, summary: Task<CopySummary, any Error>) {
        let (stream, continuation) = AsyncStream<CopyEvent>.makeStream()
        let engine = self
        let task = Task {
            defer { continuation.finish() }
            return try await engine.run(mode, from: source, to: destination, progress: progress) { continuation.yield($0) }
        }
        return (stream, task)
    }

    // MARK: Trees

    /// Where a tree run's files come from.
    enum Feed: Sendable {
        /// A walk of the source.
        case walk
        /// A chunk of a plan: its entries, in order; no listing of the source, and no deletions or
        /// folder removals at the end (`gateway finalize` does them once every chunk is done).
        case chunk(PlanChunk)
    }

    func runTree(_ mode: CopyMode, feed: Feed, from source: TransferEndpoint, to destination: TransferEndpoint,
                 progress: TransferProgress?, state: RunState) async throws {
        // A destination that only reads and writes files (no FileProviderOperations) takes a flat
        // tree into an existing folder; each folder the tree has fails as "not supported".
        let target = destination.provider as? any FileProviderOperations
        let checks = WorkQueue<Job>(capacity: options.checkers * 32)
        let transfers = WorkQueue<Checked>(capacity: options.transfers * 8)
        let rootExisted = try await destination.provider.itemIfPresent(path: destination.path) != nil
        if !rootExisted, target == nil, !options.dryRun {
            throw FileProviderError.unsupported(operation: "creating folders", path: destination.path)
        }
        let options = self.options
        let index = FolderIndex(provider: destination.provider, root: destination.path, details: .sourceStamps,
                                onUnlisted: { state.event(.detail($0)) },
                                onLeftover: { await Self.removeLeftover($0, on: target, dryRun: options.dryRun, state: state) })

        try await withThrowingTaskGroup(of: Void.self) { outer in
            // Transfers: copy (or skip) each checked file.
            for _ in 0..<options.transfers {
                outer.addTask(executorPreference: executor) {
                    while let checked = await transfers.next() {
                        let path = (try? RemotePath.join(destination.path, checked.job.relative)) ?? destination.path
                        await self.process(checked.job, mode: mode, destinationPath: path, from: source, to: destination,
                                           existing: checked.existing, progress: progress, state: state)
                    }
                }
            }
            // Walker and checkers; when they are done, the transfer queue closes.
            outer.addTask {
                do {
                    try await withThrowingTaskGroup(of: Void.self) { inner in
                        inner.addTask {
                            do {
                                switch feed {
                                case .walk:
                                    try await self.walk(source, to: destination, target: target, rootExisted: rootExisted,
                                                        index: index, checks: checks, progress: progress, state: state)
                                case .chunk(let chunk):
                                    try await self.feed(chunk, from: source, to: destination, target: target, rootExisted: rootExisted,
                                                        index: index, checks: checks, progress: progress, state: state)
                                }
                            } catch {
                                checks.finish()
                                throw error
                            }
                            checks.finish()
                        }
                        for _ in 0..<options.checkers {
                            inner.addTask {
                                while let job = await checks.next() {
                                    try Task.checkCancellation()
                                    do {
                                        let existing = job.freshFolder ? nil : try await index.item(at: job.relative)
                                        await transfers.send(Checked(job: job, existing: existing))
                                    } catch let error where error.failureKind == .cancelled {
                                        throw error
                                    } catch {
                                        state.fail(job.relative, operation: "check", error: error)
                                    }
                                }
                            }
                        }
                        try await inner.waitForAll()
                    }
                } catch {
                    transfers.finish()
                    throw error
                }
                transfers.finish()
            }
            try await outer.waitForAll()
        }

        try Task.checkCancellation()
        guard case .walk = feed else { return }
        try await finish(mode, from: source, to: destination, state: state)
    }

    /// What ends a run once its files are done (a walked run's end, a plan's `finalize`): a sync
    /// deletes the destination's extras, a move removes the source folders it emptied; each only
    /// when nothing in `state` failed.
    func finish(_ mode: CopyMode, from source: TransferEndpoint, to destination: TransferEndpoint, state: RunState) async throws {
        switch mode {
        case .copy:
            break
        case .sync:
            try await deleteExtras(from: source, to: destination, state: state)
        case .move:
            guard state.summary.failed == 0 else {
                state.event(.notice("source folders kept: \(state.summary.failed) item(s) failed"))
                return
            }
            guard !options.dryRun, let remover = source.provider as? any FileProviderOperations else { return }
            await removeEmptyFolders(source, remover: remover, state: state)
        }
    }

    /// Removes the source's folders that the move emptied, deepest first. Folders that still hold
    /// something (files kept by --ignore-existing or --update) stay, with their contents.
    func removeEmptyFolders(_ source: TransferEndpoint, remover: any FileProviderOperations, state: RunState) async {
        var folders: [String] = []
        // Never the trash folders in the source tree (nor anything in them).
        var filter = await TreeFilter([source.provider])
        do {
            for try await item in source.provider.walk(path: source.path) where !filter.skips(item) && item.isDirectory { folders.append(item.path) }
        } catch {
            state.fail("", operation: "list", error: error)
            return
        }
        for folder in folders.sorted(by: { $0.count > $1.count }) + [source.path] {
            do {
                // Emptied source folders go the way of their files (the trash, and a record), so
                // undo brings them back before the files that go into them.
                if let undoable = remover as? any FileProviderUndoable {
                    let record = try await undoable.removeItemUndoably(path: folder, recursive: false, useTrash: options.useTrash)
                    options.undoRecorder?.record(record, on: remover)
                } else {
                    try await remover.removeItem(path: folder, recursive: false)
                }
            } catch where error.failureKind == .directoryNotEmpty || error.failureKind == .notFound {
                continue
            } catch {
                state.fail(RemotePath.relative(folder, to: source.path) ?? folder, operation: "remove source folder", error: error)
            }
        }
    }

    /// A file with what the destination holds under its name.
    struct Checked: Sendable {
        var job: Job
        var existing: FileObject?
    }

    /// Lists the source, creates destination folders (parents first), and queues files.
    private func walk(_ source: TransferEndpoint, to destination: TransferEndpoint, target: (any FileProviderOperations)?,
                      rootExisted: Bool, index: FolderIndex, checks: WorkQueue<Job>, progress: TransferProgress?,
                      state: RunState) async throws {
        var fresh: Set<String> = []
        if !rootExisted {
            guard await makeFolder(destination.path, relative: "", on: target, state: state) else { return }
            fresh.insert("")
        }
        // The trash folders in either tree are not content to copy (nor to copy into).
        // (Each side's trash is known by its own paths: the source's in the walk, the destination's
        // where a source item would land.)
        var filter = await TreeFilter([source.provider])
        var destinationFilter = await TreeFilter([destination.provider])
        do {
            for try await item in source.provider.walk(path: source.path) {
                try Task.checkCancellation()
                guard let relative = RemotePath.relative(item.path, to: source.path), !relative.isEmpty else { continue }
                if filter.skips(item, relative: relative, landingIn: destination.path, on: &destinationFilter) {
                    continue
                }
                let parent = relative.lastIndex(of: "/").map { String(relative[..<$0]) } ?? ""
                let parentFresh = fresh.contains(parent)
                switch item.type {
                case .directory:
                    let path = try RemotePath.join(destination.path, relative)
                    // A link to a folder at the destination is a folder that exists: what is in it
                    // is looked up (and replaced through the trash), never taken for new.
                    let existing = parentFresh ? nil : try await index.item(at: relative)
                    let missing = parentFresh || !(existing?.isDirectory == true || existing?.isLinkToFolder == true)
                    if missing {
                        if await makeFolder(path, relative: relative, on: target, state: state) { fresh.insert(relative) }
                    }
                case .symbolicLink where item.isLinkToFolder:
                    state.skipped(relative, reason: .symbolicLinkToFolder)
                case .file, .symbolicLink:
                    if let shard = options.hashShard, !shard.contains(relative) { continue }
                    progress?.addToTotals(bytes: item.size ?? 0, files: 1)
                    await checks.send(Job(source: item, relative: relative, freshFolder: parentFresh))
                case .other:
                    state.event(.skipped(path: relative, reason: .notARegularFile))
                }
            }
        } catch let error where error.failureKind == .cancelled {
            throw error
        } catch {
            // A listing that fails stops the walk; what was queued still transfers, and the run
            // reports the failure (so sync deletes nothing).
            state.fail("", operation: "list", error: error)
        }
    }

    /// Removes an upload's temporary that a killed run left in a destination folder
    /// (``TemporaryName``), saying so; a dry run only says what it would remove.
    static func removeLeftover(_ item: FileObject, on provider: (any FileProviderOperations)?, dryRun: Bool, state: RunState) async {
        let size = item.size.map { " (\($0) bytes)" } ?? ""
        guard !dryRun else {
            state.event(.notice("would remove \(item.path)\(size): an upload's temporary left by an interrupted run"))
            return
        }
        guard let provider else { return }
        do {
            try await provider.removeItem(path: item.path, recursive: false)
            state.event(.notice("removed \(item.path)\(size): an upload's temporary left by an interrupted run"))
        } catch {
            state.event(.notice("could not remove \(item.path), an upload's temporary left by an interrupted run: \(ErrorMessage.reason(for: error))"))
        }
    }
}
