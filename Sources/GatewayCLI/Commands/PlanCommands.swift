import ArgumentParser
import Foundation
import StorageGateway
#if canImport(Glibc)
import Glibc
#endif

struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "List SRC once and split a copy, move, sync or check into chunks that workers run anywhere.",
        discussion: HelpText.reflow("""
        Writes PLAN (a local folder or REMOTE:PATH, so workers on other machines need no shared file
        system): a manifest and chunk files balanced by bytes and file count (each file or folder
        counts as 1 MiB more than its bytes). Memory stays flat however large the tree: the listing
        is spooled to disk. Then run every chunk, on as many machines as you like, and finalize:

          gateway plan ./data backup:data --out backup:plans/data --chunks 16
          gateway copy --plan backup:plans/data --shard 0      (... to 15, any order, any machine)
          gateway finalize backup:plans/data

        Under Slurm: sbatch --array=0-15 --wrap 'gateway copy --plan P --shard-from-env', then
        sbatch --dependency=afterok:JOB --wrap 'gateway finalize P'. A rerun of a chunk copies only
        what is still missing; a chunk already done is skipped. A sync deletes nothing until
        `finalize`, and then only if every chunk is done. See docs/scale-out.md.

        Without --chunks or --chunk-size, chunks weigh about 4 GiB each, and there are at most 1000
        (Slurm's default MaxArraySize allows indices 0 to 1000).

        A file larger than a chunk is split into byte ranges that several chunks write at once, where
        the destination takes that (a local or shared file system); `finalize` then moves it into
        place. Elsewhere, and for check or --checksum, it is copied whole by one chunk.
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: ArgumentHelp("Where to write the plan: a new folder, local or REMOTE:PATH.", valueName: "plan"))
    var out: String
    @Option(help: ArgumentHelp("Exactly this many chunks (1 to 100000).", valueName: "m")) var chunks: Int?
    @Option(help: ArgumentHelp("About this much per chunk: bytes, or with K, M, G, T (each file counts 1 MiB more).", valueName: "size"))
    var chunkSize: String?
    @Option(help: "What the workers run: copy, move, sync or check.") var mode: String = "copy"
    @Flag(name: [.customShort("c"), .long], help: "Compare files of the same size by content hash (as copy --checksum).") var checksum = false
    @Flag(help: "Compare by size only.") var sizeOnly = false
    @Flag(help: "Skip files that exist at the destination, whatever they hold.") var ignoreExisting = false
    @Flag(help: "Skip files that are newer at the destination.") var update = false
    @Flag(name: .customLong("no-trash"), help: "Replace and delete for good instead of through the destination's trash.") var noTrash = false
    @Flag(help: "Print what was planned as JSON on stdout.") var json = false
    @Argument(help: "Source folder: REMOTE:PATH or a local path.") var source: String
    @Argument(help: "Destination folder: REMOTE:PATH or a local path.") var destination: String

    func validate() throws {
        guard PlanMode(rawValue: mode) != nil else { throw ValidationError("--mode must be copy, move, sync or check, not \"\(mode)\"") }
        guard chunks == nil || chunkSize == nil else { throw ValidationError("give --chunks or --chunk-size, not both") }
        if let chunks, !(1...PlanBuilder.maximumChunks).contains(chunks) {
            throw ValidationError("--chunks must be between 1 and \(PlanBuilder.maximumChunks)")
        }
        if let chunkSize, (ByteSize.parse(chunkSize) ?? 0) < 1 {
            throw ValidationError("--chunk-size must be a size such as 1G or 500M, not \"\(chunkSize)\"")
        }
    }

    func run() async throws {
        let context = try CommandContext.make(global)
        let from = try context.location(source)
        let to = try context.location(destination)
        let planLocation = try context.location(out)
        // A plan inside SRC or DST would be copied, or deleted by a sync's finalize, as content.
        for side in [from, to] where side.remote == planLocation.remote
            && (planLocation.path == side.path || planLocation.path.hasPrefix(side.path == "/" ? "/" : side.path + "/")) {
            Diagnostics.printLine("plan --out \(planLocation.original): the plan must lie outside \(side.original)")
            throw ExitCode(2)
        }
        let sourceProvider = try await context.provider(for: from, operation: "plan")
        let destinationProvider = try await context.provider(for: to, operation: "plan")
        let store = try await PlanWorker.store(context, location: planLocation, operation: "plan")
        var options = TransferPlan.Options()
        options.checksum = checksum
        options.sizeOnly = sizeOnly
        options.ignoreExisting = ignoreExisting
        options.update = update
        options.trash = !noTrash
        let chunking: PlanBuilder.Chunking = if let chunks { .count(chunks) }
            else { .weight(chunkSize.flatMap(ByteSize.parse) ?? PlanBuilder.defaultChunkWeight) }
        let builder = PlanBuilder(mode: PlanMode(rawValue: mode) ?? .copy,
                                  source: TransferEndpoint(provider: sourceProvider, path: from.path, displayName: from.original),
                                  sourceLocation: TransferPlan.Location(remote: from.remote, path: from.path),
                                  destination: TransferEndpoint(provider: destinationProvider, path: to.path, displayName: to.original),
                                  destinationLocation: TransferPlan.Location(remote: to.remote, path: to.path),
                                  options: options, chunking: chunking)
        let clock = ContinuousClock()
        let start = clock.now
        let folder = LocalScratch.make("gateway-plan")
        defer { try? FileManager.default.removeItem(at: folder) }
        let quiet = global.quiet
        let showsProgress = context.showsProgress
        let output = try await context.perform("plan", from) {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return try await builder.build(in: folder, onProgress: { count in
                if showsProgress, count > 0, count % 100_000 == 0 { Diagnostics.printLine("plan: \(count) items listed") }
            }, onLeftOut: { relative, reason in
                if !quiet { Diagnostics.printLine("plan \(from.original)/\(relative): skipped: \(reason)") }
            })
        }
        do {
            try await store.create(output)
        } catch where error.failureKind == .alreadyExists {
            Diagnostics.printLine("plan \(planLocation.original): a plan is already there; give a new folder (or remove the old plan)")
            throw ExitCode(2)
        } catch {
            throw Diagnostics.fail(operation: "plan", item: planLocation.original, error: error)
        }
        let plan = output.plan
        let elapsed = (clock.now - start).inSeconds
        if json {
            StandardOutput.writeRaw(Data((JSON.encode([
                "plan": JSONField.string(planLocation.original), "mode": .string(plan.mode.rawValue),
                "fingerprint": .string(plan.fingerprint), "chunks": .integer(Int64(plan.chunks.count)),
                "files": .integer(Int64(plan.files)), "folders": .integer(Int64(plan.folders)), "bytes": .integer(plan.bytes),
                "left_out": .integer(Int64(plan.leftOut)), "split_files": .integer(Int64(plan.splitFiles?.count ?? 0)),
                "elapsed_seconds": .number(elapsed),
            ]) + "\n").utf8))
        }
        if !global.quiet {
            Diagnostics.printLine("planned \(plan.mode.rawValue) of \(plan.files) file\(plan.files == 1 ? "" : "s") (\(Format.bytes(plan.bytes))) "
                                  + "and \(plan.folders) folder\(plan.folders == 1 ? "" : "s") in \(plan.chunks.count) chunk\(plan.chunks.count == 1 ? "" : "s") "
                                  + (plan.splitFiles.map { "(\($0.count) large file\($0.count == 1 ? "" : "s") split across chunks) " } ?? "")
                                  + "at \(planLocation.original), \(String(format: "%.1fs", elapsed)); run chunks 0 to \(plan.chunks.count - 1) "
                                  + "with `gateway \(plan.mode.rawValue) --plan \(planLocation.original) --shard K`, then `gateway finalize \(planLocation.original)`")
        }
    }
}

struct FinalizeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "finalize",
        abstract: "After every chunk of a plan ran: check they are all done, merge their summaries, finish the run.",
        discussion: HelpText.reflow("""
        Verifies that every chunk has its done-marker. If any chunk failed, is still running or never
        ran, it lists them, changes nothing and exits 1: rerun those chunks, then finalize again.
        Otherwise it merges the chunks' summaries into one (--json as copy's, with "chunks"), and
        finishes the run: files split across chunks are moved into place (any range no chunk wrote is
        written first), then a sync deletes what the destination has and the source lacks (through
        the trash unless the plan said --no-trash), a move removes the source folders it emptied, a
        check lists the extra files and all differences (exit 1 when there are any).
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print the merged summary as JSON on stdout: {copied, skipped, failed, deleted, bytes, elapsed_seconds, dry_run, chunks}.")
    var json = false
    @Flag(help: "Check the chunks and show what a sync would delete; change nothing.") var dryRun = false
    @Option(help: "Folders compared at once while looking for extras.") var checkers = 8
    @Argument(help: "The plan: a local folder or REMOTE:PATH.") var plan: String

    func run() async throws {
        let context = try CommandContext.make(global)
        let location = try context.location(plan)
        let store = try await PlanWorker.store(context, location: location, operation: "finalize")
        let manifest = try await context.perform("finalize", location) { try await store.manifest() }
        let markers = try await context.perform("finalize", location) { try await store.markers(of: manifest) }
        let states = ChunkStates(plan: manifest, markers: markers)
        let unfinished = states.unfinished
        guard unfinished.isEmpty else {
            for line in states.problemLines(limit: 50) { Diagnostics.printLine("finalize \(location.original): \(line)") }
            Diagnostics.printLine("finalize \(location.original): \(unfinished.count) of \(manifest.chunks.count) chunks are not done; "
                                  + (manifest.mode == .sync ? "nothing was deleted. " : "")
                                  + "Rerun them (gateway \(manifest.mode.rawValue) --plan \(location.original) --shard K), then finalize again")
            throw ExitCode(1)
        }
        let done = markers.compactMap { $0.value[.done] }
        let worker = PlanWorker(context: context, store: store, plan: manifest, location: location, chunk: 0)
        let (source, destination) = try await worker.endpoints(operation: "finalize")
        var options = manifest.options.applied(to: CopyOptions(checkers: checkers, dryRun: dryRun))
        let journal = worker.journal(source: source, destination: destination)
        defer { journal.finish() }
        options.undoRecorder = journal
        let engine = CopyEngine(options: options)

        if manifest.mode == .check {
            var report = CheckReport()
            for marker in done {
                report.missing += marker.missing ?? []
                report.different += marker.different ?? []
                report.errors += marker.errors ?? []
                report.matching += marker.matching ?? 0
            }
            report.extra = try await context.perform("finalize", location) { try await engine.extraFiles(source: source, destination: destination) }
            report.missing.sort()
            report.different.sort()
            report.errors.sort()
            if !dryRun { try? await store.writeFinalized(Data(JSON.encode(["mode": JSONField.string("check"), "identical": .boolean(report.isIdentical)]).utf8)) }
            try CheckCommand.print(report, json: json, global: global)
            return
        }

        var summary = CopySummary()
        for marker in done { summary.add(marker.summary) }
        summary.skipped += manifest.leftOut
        let operation = manifest.mode.rawValue
        let reporter = EventPrinter(operation: operation, source: source.displayName, destination: destination.displayName,
                                    sourceIsFolder: true, verbose: global.verbose, quiet: global.quiet,
                                    emit: { Diagnostics.printLine($0) })
        let finish = try await context.perform("finalize", location) {
            try await engine.finishPlan(manifest.mode.copyMode ?? .copy, from: source, to: destination, splitFiles: manifest.splitFiles ?? [],
                                        rangeKey: manifest.rangeKey, ranges: done.flatMap { $0.ranges ?? [] }) { reporter.print($0) }
        }
        summary.add(finish)
        summary.dryRun = dryRun
        // The run's wall time: from the first chunk's start to the last one's end, and this finish.
        let first = done.map(\.started).min() ?? Date()
        let last = done.compactMap(\.finished).max() ?? Date()
        summary.elapsed = .milliseconds(Int64(max(0, last.timeIntervalSince(first)) * 1000)) + finish.elapsed
        if !dryRun, summary.failed == 0 {
            try? await store.writeFinalized(Data(JSON.encode([
                "mode": JSONField.string(operation), "copied": .integer(Int64(summary.copied)), "skipped": .integer(Int64(summary.skipped)),
                "deleted": .integer(Int64(summary.deleted)), "bytes": .integer(summary.bytes), "finished": .string(Format.iso8601(Date()) ?? ""),
            ]).utf8))
        }
        SummaryPrinter.print(summary, operation: operation, json: json, quiet: global.quiet, prefix: "\(location.original): ",
                             extra: ["chunks": .integer(Int64(manifest.chunks.count))])
        if !summary.succeeded { throw ExitCode(1) }
    }
}

struct PlanStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan-status",
        abstract: "Show how far a plan's chunks are: done, running, failed or pending, with files and bytes.",
        discussion: HelpText.reflow("""
        Reads the plan's markers (one listing of its state folder). A chunk is `done`, `failed`,
        `running`, `interrupted` (its marker says running, but its process on this host is gone) or
        `pending` (never started). --json prints {mode, fingerprint, chunks, done, running, failed,
        interrupted, pending, finalized, files, bytes, files_done, bytes_done, chunk_states: [...]}.
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON.") var json = false
    @Argument(help: "The plan: a local folder or REMOTE:PATH.") var plan: String

    func run() async throws {
        let context = try CommandContext.make(global)
        let location = try context.location(plan)
        let store = try await PlanWorker.store(context, location: location, operation: "plan-status")
        let manifest = try await context.perform("plan-status", location) { try await store.manifest() }
        let markers = try await context.perform("plan-status", location) { try await store.markers(of: manifest) }
        let finalized = (try? await store.isFinalized()) ?? false
        let states = ChunkStates(plan: manifest, markers: markers)
        let counts = states.counts
        var filesDone = 0
        var bytesDone: Int64 = 0
        for chunk in manifest.chunks where states.state(of: chunk.index) == .done {
            filesDone += chunk.files
            bytesDone = bytesDone.saturatingAdding(chunk.bytes)
        }
        if json {
            let perChunk: [JSONField] = manifest.chunks.map { chunk in
                let state = states.state(of: chunk.index)
                var fields: [String: JSONField] = ["chunk": .integer(Int64(chunk.index)), "state": .string(state.rawValue),
                                                   "files": .integer(Int64(chunk.files)), "bytes": .integer(chunk.bytes)]
                if let marker = states.latest(chunk.index) {
                    fields["host"] = .string(marker.host)
                    fields["pid"] = .integer(Int64(marker.pid))
                    fields["started"] = .string(Format.iso8601(marker.started) ?? "")
                    if let finished = marker.finished { fields["finished"] = .string(Format.iso8601(finished) ?? "") }
                    if marker.state != .running {
                        fields["copied"] = .integer(Int64(marker.copied))
                        fields["skipped"] = .integer(Int64(marker.skipped))
                        fields["failed"] = .integer(Int64(marker.failed))
                        fields["bytes_copied"] = .integer(marker.bytes)
                    }
                }
                return .object(fields)
            }
            var object: [String: JSONField] = [
                "plan": .string(location.original), "mode": .string(manifest.mode.rawValue), "fingerprint": .string(manifest.fingerprint),
                "source": .string(manifest.source.display), "destination": .string(manifest.destination.display),
                "chunks": .integer(Int64(manifest.chunks.count)), "finalized": .boolean(finalized),
                "files": .integer(Int64(manifest.files)), "bytes": .integer(manifest.bytes),
                "files_done": .integer(Int64(filesDone)), "bytes_done": .integer(bytesDone), "chunk_states": .array(perChunk),
            ]
            for state in ChunkStates.State.allCases { object[state.rawValue] = .integer(Int64(counts[state] ?? 0)) }
            StandardOutput.writeRaw(Data((JSON.encode(object) + "\n").utf8))
            return
        }
        let out = StandardOutput()
        out.line("plan \(Format.shown(location.original)): \(manifest.mode.rawValue) \(Format.shown(manifest.source.display)) to "
                 + "\(Format.shown(manifest.destination.display)), fingerprint \(manifest.fingerprint.prefix(12))")
        out.line("chunks \(manifest.chunks.count): " + ChunkStates.State.allCases.map { "\($0.rawValue) \(counts[$0] ?? 0)" }.joined(separator: ", ")
                 + (finalized ? "; finalized" : ""))
        out.line("files \(filesDone) of \(manifest.files) in done chunks, \(Format.bytes(bytesDone)) of \(Format.bytes(manifest.bytes))")
        for line in states.problemLines(limit: .max) { out.line(line) }
        out.flush()
    }
}

/// Where each chunk of a plan stands, from its markers.
struct ChunkStates {
    enum State: String, CaseIterable {
        case done, running, interrupted, failed, pending
    }

    let plan: TransferPlan
    let markers: [Int: [ChunkMarker.State: ChunkMarker]]

    /// A chunk's state: done wins, then a live run, then a failure.
    func state(of chunk: Int) -> State {
        guard let found = markers[chunk] else { return .pending }
        if found[.done] != nil { return .done }
        if let running = found[.running] {
            if running.host == ProcessInfo.processInfo.hostName, kill(running.pid, 0) != 0, errno == ESRCH { return .interrupted }
            return .running
        }
        if found[.failed] != nil { return .failed }
        return .pending
    }

    /// The marker that says most about a chunk now.
    func latest(_ chunk: Int) -> ChunkMarker? {
        markers[chunk].flatMap { $0[.done] ?? $0[.running] ?? $0[.failed] }
    }

    var counts: [State: Int] {
        var counts: [State: Int] = [:]
        for chunk in plan.chunks.indices { counts[state(of: chunk), default: 0] += 1 }
        return counts
    }

    /// The chunks that are not done.
    var unfinished: [Int] { plan.chunks.indices.filter { state(of: $0) != .done } }

    /// One line per chunk that is not done, at most `limit` (then how many more).
    func problemLines(limit: Int) -> [String] {
        var lines: [String] = []
        let unfinished = self.unfinished
        for chunk in unfinished.prefix(limit) {
            let marker = latest(chunk)
            let when = marker.flatMap { Format.iso8601($0.finished ?? $0.started) } ?? ""
            switch state(of: chunk) {
            case .failed: lines.append("chunk \(chunk): failed, \(marker?.failed ?? 0) item(s), on \(marker?.host ?? "?") at \(when)")
            case .running: lines.append("chunk \(chunk): running on \(marker?.host ?? "?") (pid \(marker?.pid ?? 0)) since \(when)")
            case .interrupted: lines.append("chunk \(chunk): interrupted (its process \(marker?.pid ?? 0) on this host is gone) since \(when)")
            case .pending: lines.append("chunk \(chunk): not run")
            case .done: break
            }
        }
        if unfinished.count > limit { lines.append("... and \(unfinished.count - limit) more") }
        return lines
    }
}
