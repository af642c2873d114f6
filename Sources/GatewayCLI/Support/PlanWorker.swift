import ArgumentParser
import Foundation
import StorageGateway
#if canImport(Glibc)
import Glibc
#endif

/// `--plan`, `--shard`, `--shard-from-env` and `--hash-shard`: how `copy`, `move`, `sync` and
/// `check` run one part of a bigger run.
struct ShardOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Run one chunk of this plan (made by `gateway plan`; a local folder or REMOTE:PATH) instead of SRC and DST.",
                               valueName: "plan"))
    var plan: String?
    @Option(help: ArgumentHelp("The chunk of --plan to run, from 0.", valueName: "k")) var shard: Int?
    @Flag(help: "Take the chunk from $SLURM_ARRAY_TASK_ID (Slurm job arrays), $JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs) or $GATEWAY_SHARD, in that order.")
    var shardFromEnv = false
    @Option(help: ArgumentHelp("Without a plan: take only the files whose path hashes to K of N (every worker lists the whole source).",
                               valueName: "k/n"))
    var hashShard: String?

    /// The variables `--shard-from-env` reads, in order.
    static let shardVariables = ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "GATEWAY_SHARD"]

    func validate() throws {
        if plan != nil {
            guard (shard != nil) != shardFromEnv else { throw ValidationError("--plan needs one of --shard K or --shard-from-env") }
            guard hashShard == nil else { throw ValidationError("--hash-shard and --plan do not go together: a plan's chunks are its shards") }
        } else {
            guard shard == nil, !shardFromEnv else { throw ValidationError("--shard and --shard-from-env need --plan") }
        }
        if let shard, shard < 0 { throw ValidationError("--shard must be 0 or more") }
        if let hashShard, HashShard(parsing: hashShard) == nil {
            throw ValidationError("--hash-shard must be K/N with 0 <= K < N, such as 0/4, not \"\(hashShard)\"")
        }
    }

    /// The parsed `--hash-shard`.
    var parsedHashShard: HashShard? { hashShard.flatMap(HashShard.init(parsing:)) }

    /// The chunk to run: `--shard`, or the first of ``shardVariables`` that is set.
    func chunkIndex(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Int {
        if let shard { return shard }
        for variable in Self.shardVariables {
            guard let value = environment[variable], !value.isEmpty else { continue }
            guard let index = Int(value), index >= 0 else {
                Diagnostics.printLine("--shard-from-env: $\(variable) is \"\(value)\", not a chunk number")
                throw ExitCode(2)
            }
            return index
        }
        Diagnostics.printLine("--shard-from-env: none of $\(Self.shardVariables.joined(separator: ", $")) is set "
                              + "(run under a Slurm job array or a Kubernetes Indexed Job, or set GATEWAY_SHARD)")
        throw ExitCode(2)
    }

    /// Refuses SRC and DST beside --plan (the plan names them), and requires them without it.
    func checkArguments(source: String?, destination: String?, operation: String) throws -> (source: String, destination: String)? {
        if plan != nil {
            guard source == nil, destination == nil else {
                Diagnostics.printLine("\(operation) --plan takes no SRC or DST: the plan names them")
                throw ExitCode(2)
            }
            return nil
        }
        guard let source, let destination else {
            Diagnostics.printLine("\(operation) needs SRC and DST (or --plan PLAN --shard K)")
            throw ExitCode(2)
        }
        return (source, destination)
    }
}

/// One chunk of a plan, run by a worker: the plan read and checked, the chunk fetched, markers
/// written before and after.
struct PlanWorker {
    let context: CommandContext
    let store: PlanStore
    let plan: TransferPlan
    let location: RemoteLocation
    let chunk: Int

    /// Opens the plan at `argument` and checks it is a `mode` plan with a chunk `chunk`.
    static func open(_ context: CommandContext, plan argument: String, mode: PlanMode, chunk: Int, operation: String) async throws -> PlanWorker {
        let location = try context.location(argument)
        let store = try await PlanWorker.store(context, location: location, operation: operation)
        let plan = try await context.perform(operation, location) { try await store.manifest() }
        guard plan.mode == mode else {
            Diagnostics.printLine("\(operation) --plan \(location.original): this is a \(plan.mode.rawValue) plan; run it with `gateway \(plan.mode.rawValue) --plan`")
            throw ExitCode(2)
        }
        guard plan.chunks.indices.contains(chunk) else {
            Diagnostics.printLine("\(operation) --plan \(location.original): no chunk \(chunk); the plan has chunks 0 to \(plan.chunks.count - 1)")
            throw ExitCode(2)
        }
        return PlanWorker(context: context, store: store, plan: plan, location: location, chunk: chunk)
    }

    /// The plan folder's store (its remote must read and write files).
    static func store(_ context: CommandContext, location: RemoteLocation, operation: String) async throws -> PlanStore {
        let provider = try await context.provider(for: location, operation: operation)
        let files = try context.capability((any FileProviderReadWrite).self, of: provider, operation: operation, location: location)
        return PlanStore(provider: files, path: location.path)
    }

    /// The plan's source and destination, resolved with this worker's configuration.
    func endpoints(operation: String) async throws -> (source: TransferEndpoint, destination: TransferEndpoint) {
        var sides: [TransferEndpoint] = []
        for side in [plan.source, plan.destination] {
            let provider = try await context.provider(for: side.location, operation: operation)
            sides.append(TransferEndpoint(provider: provider, path: side.path, displayName: side.display))
        }
        return (sides[0], sides[1])
    }

    /// The undo journal of this run, knowing both sides (see ``endpoints(operation:)``).
    func journal(source: TransferEndpoint, destination: TransferEndpoint) -> JournalRecorder {
        let journal = JournalRecorder(context: context)
        journal.register(source.provider, location: plan.source.location)
        journal.register(destination.provider, location: plan.destination.location)
        return journal
    }

    /// The line saying the chunk was done before, or `nil` when it was not.
    func alreadyDone(operation: String) async throws -> ChunkMarker? {
        try await context.perform(operation, location) { try await store.marker(chunk: chunk, state: .done, of: plan) }
    }

    /// Runs `body` on the fetched chunk between the markers: `running` first, then `done` when
    /// `body`'s marker has no failures, else `failed`. A dry run writes no marker.
    @discardableResult
    func run(operation: String, dryRun: Bool, _ body: (PlanChunk, inout ChunkMarker) async throws -> Void) async throws -> ChunkMarker {
        var marker = ChunkMarker(plan: plan, chunk: chunk, state: .running)
        if !dryRun { try await context.perform(operation, location) { try await store.write(marker) } }
        let folder = LocalScratch.make("gateway-chunk")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let fetched = try await store.fetchChunk(chunk, of: plan, to: folder.appendingPathComponent(PlanLayout.chunkFile(chunk)))
            try await body(fetched, &marker)
        } catch {
            if !dryRun {
                // Failed, or interrupted (Ctrl-C, SIGTERM from the scheduler): recorded as failed, so
                // `plan-status` shows the chunk began; written outside the cancelled task.
                marker.failed = max(marker.failed, 1)
                let (store, failed) = (self.store, marker)
                await Task.detached { try? await Self.settle(failed, in: store) }.value
            }
            throw Diagnostics.fail(operation: operation, item: "\(location.original) chunk \(chunk)", error: error)
        }
        guard !dryRun else { return marker }
        try await context.perform(operation, location) { try await Self.settle(marker, in: store) }
        return marker
    }

    /// Writes a run's last marker: `done` when nothing failed (a failed-marker of an earlier run
    /// goes), else `failed`; the running-marker goes.
    private static func settle(_ marker: ChunkMarker, in store: PlanStore) async throws {
        var marker = marker
        marker.finished = Date()
        marker.state = marker.failed == 0 ? .done : .failed
        try await store.write(marker)
        try await store.removeMarker(chunk: marker.chunk, state: .running)
        if marker.state == .done { try await store.removeMarker(chunk: marker.chunk, state: .failed) }
    }

    /// `chunk K of PLAN` for messages.
    var name: String { "chunk \(chunk) of \(location.original)" }
}

/// Local scratch folders of plans and workers (`$TMPDIR/gateway-chunk-PID-RANDOM`): removed when
/// done, and those of processes that died (`kill -9`) removed by the next one to start.
enum LocalScratch {
    /// A new folder's URL (not yet created), after removing the folders of dead processes.
    static func make(_ prefix: String) -> URL {
        let temporary = FileManager.default.temporaryDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [] where name.hasPrefix(prefix + "-") {
            let fields = name.dropFirst(prefix.count + 1).split(separator: "-")
            guard fields.count == 2, let pid = Int32(fields[0]), pid > 0, pid != getpid() else { continue }
            if kill(pid, 0) != 0, errno == ESRCH { try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name)) }
        }
        return temporary.appendingPathComponent("\(prefix)-\(getpid())-\(UUID().uuidString.prefix(8))")
    }
}

extension TransferPlan.Location {
    /// This side as a location the command context resolves.
    var location: RemoteLocation { RemoteLocation(remote: remote, path: path, original: display) }
}
