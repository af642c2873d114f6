import ArgumentParser
import Foundation
import StorageGateway

/// Flags shared by `copy`, `move` and `sync`.
struct CopyFlags: ParsableArguments {
    @Option(help: "Files transferred at once (network remotes without their own max_connections keep as many connections).") var transfers = 4
    @Option(help: "Files compared (looked up at the destination) at once.") var checkers = 8
    @Flag(help: "Show what would be copied or deleted; change nothing.") var dryRun = false
    @Flag(help: "Skip files that exist at the destination, whatever they hold.") var ignoreExisting = false
    @Flag(help: "Skip files that are newer at the destination.") var update = false
    @Flag(help: "Compare by size only (not modification time).") var sizeOnly = false
    @Flag(name: [.customShort("c"), .long],
          help: "Compare files of the same size by content hash (MD5/SHA-1/SHA-256, where both sides have one in common) instead of modification time.")
    var checksum = false
    @Option(help: "Ranged streams a large file moves in at once: downloads into a local destination, uploads to WebDAV servers that store ranges (1: off).")
    var multiThreadStreams = 4
    @Option(help: ArgumentHelp("Files at least this large use several streams: bytes, or with K, M, G (powers of 1024).", valueName: "size"))
    var multiThreadCutoff = "256M"
    @Option(help: "Attempts per file on transient errors (time-outs, dropped connections, 5xx, 429).") var retries = 3
    @Option(help: "Attempts per single request that can be repeated safely (a connection that broke before the answer, a busy server).")
    var lowLevelRetries = 10
    @Flag(help: "Print the final summary as JSON on stdout: {copied, skipped, failed, deleted, bytes, elapsed_seconds, dry_run}.")
    var json = false
    @Flag(name: .customLong("no-trash"),
          help: "Delete (sync) and replace files for good, instead of moving the old ones to the remote's trash (then `gateway undo` cannot bring them back).")
    var noTrash = false

    func validate() throws {
        guard (1...64).contains(transfers) else { throw ValidationError("--transfers must be between 1 and 64") }
        guard (1...256).contains(checkers) else { throw ValidationError("--checkers must be between 1 and 256") }
        guard (1...100).contains(retries) else { throw ValidationError("--retries must be between 1 and 100") }
        guard (1...100).contains(lowLevelRetries) else { throw ValidationError("--low-level-retries must be between 1 and 100") }
        guard (1...32).contains(multiThreadStreams) else { throw ValidationError("--multi-thread-streams must be between 1 and 32") }
        guard ByteSize.parse(multiThreadCutoff) != nil else {
            throw ValidationError("--multi-thread-cutoff must be a size such as 64M, 1G or 1048576, not \"\(multiThreadCutoff)\"")
        }
    }

    /// The first flag set that a plan fixes for all its workers, as written.
    var planLevelFlag: String? {
        if checksum { return "--checksum" }
        if sizeOnly { return "--size-only" }
        if ignoreExisting { return "--ignore-existing" }
        if update { return "--update" }
        if noTrash { return "--no-trash" }
        return nil
    }

    var options: CopyOptions {
        var options = CopyOptions(transfers: transfers, checkers: checkers, ignoreExisting: ignoreExisting, update: update,
                                  sizeOnly: sizeOnly, dryRun: dryRun, retries: retries)
        options.checksum = checksum
        options.multiThreadStreams = multiThreadStreams
        options.multiThreadCutoff = ByteSize.parse(multiThreadCutoff) ?? options.multiThreadCutoff
        options.useTrash = !noTrash
        return options
    }
}

struct CopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a file or a folder's contents between any two remotes; unchanged files are skipped.",
        discussion: HelpText.reflow("""
        A file goes to DST, or into DST when DST ends with '/' or is an existing folder. A folder's
        contents, empty subfolders included, are copied into DST (created if missing). Files with the
        same size and modification time at the destination are skipped. Listing and copying overlap:
        --checkers files are compared and --transfers files copied at once. Every file is written under
        a temporary name and renamed into place when complete, so an interrupted copy never leaves a
        truncated file under its final name. Modification times are preserved where the destination
        can set them. Transient errors are retried (--retries) with exponential back-off. Files it
        replaces go to the destination's trash first, so `gateway undo` reverts the whole copy.

        Examples:
          gateway copy report.pdf docs:reports/
          gateway copy --transfers 8 ./photos backup:photos
          gateway copy --dry-run ./photos backup:photos

        Too big for one machine? `gateway plan` splits the run into chunks, `gateway copy --plan
        PLAN --shard K` (or --shard-from-env under Slurm or Kubernetes) runs one, `gateway finalize
        PLAN` ends it; --hash-shard K/N takes a share without a plan.
        """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var flags: CopyFlags
    @OptionGroup(title: "Scale-out") var shards: ShardOptions
    @Argument(help: "Source: REMOTE:PATH or a local path (none with --plan).") var source: String?
    @Argument(help: "Destination: REMOTE:PATH or a local path (none with --plan).") var destination: String?

    func run() async throws {
        try await TransferCommand.run(.copy, global: global, flags: flags, shards: shards, source: source, destination: destination)
    }
}

struct MoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move a file or a folder between any two remotes.",
        discussion: HelpText.reflow("""
        Within one remote each file is renamed. Between remotes each file is copied (see `gateway copy`)
        and its source removed only after the copy was verified; the source folders are removed at
        the end, and only if nothing failed.
        """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var flags: CopyFlags
    @OptionGroup(title: "Scale-out") var shards: ShardOptions
    @Argument(help: "Source: REMOTE:PATH or a local path (none with --plan).") var source: String?
    @Argument(help: "Destination: REMOTE:PATH or a local path (none with --plan).") var destination: String?

    func run() async throws {
        try await TransferCommand.run(.move, global: global, flags: flags, shards: shards, source: source, destination: destination)
    }
}

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Make DST match SRC: copy what differs, then delete what SRC lacks.",
        discussion: HelpText.reflow("""
        Copies like `gateway copy`, then deletes files and folders at DST that SRC does not have. The
        deletions happen only after every copy succeeded, and never if any error happened in the run.
        Use --dry-run first: it lists the copies and the deletions and changes nothing. What sync
        deletes or replaces goes to the destination's trash (one rename each), so a wrong sync is
        reverted by `gateway undo`; --no-trash makes it permanent.

        Example:
          gateway sync --dry-run ./site web:htdocs
        """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var flags: CopyFlags
    @OptionGroup(title: "Scale-out") var shards: ShardOptions
    @Argument(help: "Source folder: REMOTE:PATH or a local path (none with --plan).") var source: String?
    @Argument(help: "Destination folder: REMOTE:PATH or a local path (none with --plan).") var destination: String?

    func run() async throws {
        try await TransferCommand.run(.sync, global: global, flags: flags, shards: shards, source: source, destination: destination)
    }
}

/// The shared body of `copy`, `move` and `sync`.
enum TransferCommand {
    static func run(_ mode: CopyMode, global: GlobalOptions, flags: CopyFlags, shards: ShardOptions,
                    source: String?, destination: String?) async throws {
        let operation = mode.rawValue
        let context = try CommandContext.make(global, requestAttempts: flags.lowLevelRetries, concurrency: flags.transfers)
        if mode == .move, shards.hashShard != nil {
            Diagnostics.printLine("move --hash-shard: not supported (workers would race to remove the source folders); use a plan: gateway plan --mode move")
            throw ExitCode(2)
        }
        guard let (source, destination) = try shards.checkArguments(source: source, destination: destination, operation: operation) else {
            try await runChunk(mode, context: context, global: global, flags: flags, shards: shards)
            return
        }
        let from = try context.location(source)
        let to = try context.location(destination)
        let sourceProvider = try await context.provider(for: from, operation: operation)
        let destinationProvider = try await context.provider(for: to, operation: operation)
        let item = try await context.perform(operation, from) { try await sourceProvider.attributesOfItem(path: from.path) }
        if mode == .sync && !item.isDirectory {
            throw Diagnostics.fail(operation: operation, item: from.original,
                                   error: FileProviderError.invalidPath(path: from.path, reason: "sync needs a folder (use copy for a file)"))
        }
        // A file goes into DST when DST ends with '/' or is an existing folder.
        var targetPath = to.path
        var targetName = to.original
        if !item.isDirectory {
            let existing = try? await destinationProvider.attributesOfItem(path: to.path)
            if to.hasTrailingSlash || existing?.isDirectory == true {
                targetPath = try await context.perform(operation, to) { try RemotePath.join(to.path, item.name) }
                targetName = to.original.hasSuffix("/") ? to.original + item.name : to.original + "/" + item.name
            }
        }
        let sourceEndpoint = TransferEndpoint(provider: sourceProvider, path: from.path, displayName: from.original)
        let target = TransferEndpoint(provider: destinationProvider, path: targetPath, displayName: targetName)
        let sameRemote = (sourceProvider as AnyObject) === (destinationProvider as AnyObject)
        context.logger.debug("\(operation) plan", metadata: [
            "source": .string("\(sourceProvider.typeName) \(from.original)"),
            "destination": .string("\(destinationProvider.typeName) \(targetName)"),
            "mode": .string(sameRemote && sourceProvider.capabilities.supports(mode == .move ? .serverSideMove : .serverSideCopy)
                ? "server-side" : "streamed"),
            "transfers": .stringConvertible(flags.transfers), "checkers": .stringConvertible(flags.checkers),
        ])

        let progress = TransferProgress()
        let renderer = ProgressRenderer(progress: progress, enabled: context.showsProgress && !flags.dryRun)
        let reporter = EventPrinter(operation: operation, source: from.original, destination: targetName,
                                    sourceIsFolder: item.isDirectory, verbose: global.verbose, quiet: global.quiet,
                                    emit: { renderer.printAbove("gateway: " + Diagnostics.safe($0)) })
        let journal = JournalRecorder(context: context)
        journal.register(sourceProvider, location: from)
        journal.register(destinationProvider, location: to)
        defer { journal.finish() }
        var options = flags.options
        options.undoRecorder = journal
        options.hashShard = shards.parsedHashShard
        let summary: CopySummary
        do {
            summary = try await CopyEngine(options: options).run(mode, from: sourceEndpoint, to: target, progress: progress) {
                reporter.print($0)
            }
        } catch {
            renderer.finish()
            throw Diagnostics.fail(operation: operation, item: from.original, error: error)
        }
        renderer.finish()
        SummaryPrinter.print(summary, operation: operation, json: flags.json, quiet: global.quiet)
        if !summary.succeeded { throw ExitCode(1) }
    }

    /// `copy|move|sync --plan PLAN --shard K`: one chunk, between its markers.
    static func runChunk(_ mode: CopyMode, context: CommandContext, global: GlobalOptions, flags: CopyFlags, shards: ShardOptions) async throws {
        let operation = mode.rawValue
        guard let planArgument = shards.plan else { return }
        if let flag = flags.planLevelFlag {
            Diagnostics.printLine("\(operation) --plan: \(flag) is set when the plan is made (gateway plan \(flag)), not per worker")
            throw ExitCode(2)
        }
        let worker = try await PlanWorker.open(context, plan: planArgument, mode: PlanMode(rawValue: mode.rawValue) ?? .copy,
                                               chunk: try shards.chunkIndex(), operation: operation)
        if !flags.dryRun, let done = try await worker.alreadyDone(operation: operation) {
            if !global.quiet {
                Diagnostics.printLine("\(worker.name) is already done (\(done.copied) copied, \(done.skipped) skipped, on \(done.host)); nothing to do")
            }
            return
        }
        let (sourceEndpoint, target) = try await worker.endpoints(operation: operation)
        let progress = TransferProgress()
        let renderer = ProgressRenderer(progress: progress, enabled: context.showsProgress && !flags.dryRun)
        let reporter = EventPrinter(operation: operation, source: sourceEndpoint.displayName, destination: target.displayName,
                                    sourceIsFolder: true, verbose: global.verbose, quiet: global.quiet,
                                    emit: { renderer.printAbove("gateway: " + Diagnostics.safe($0)) })
        let journal = worker.journal(source: sourceEndpoint, destination: target)
        defer { journal.finish() }
        var options = worker.plan.options.applied(to: flags.options)
        options.undoRecorder = journal
        var summary = CopySummary()
        do {
            try await worker.run(operation: operation, dryRun: flags.dryRun) { chunk, marker in
                summary = try await CopyEngine(options: options).run(mode, chunk: chunk, from: sourceEndpoint, to: target, progress: progress) {
                    reporter.print($0)
                }
                marker.record(summary)
            }
        } catch {
            renderer.finish()
            throw error
        }
        renderer.finish()
        SummaryPrinter.print(summary, operation: operation, json: flags.json, quiet: global.quiet, prefix: worker.name + ": ")
        if !summary.succeeded { throw ExitCode(1) }
    }
}

/// Turns engine events into lines: failures and notices on stderr, dry-run actions on stdout,
/// each copied file with --verbose.
struct EventPrinter: Sendable {
    let operation: String
    let source: String
    let destination: String
    let sourceIsFolder: Bool
    let verbose: Bool
    let quiet: Bool
    /// Writes one stderr line (given without the `gateway: ` prefix), above a live progress block.
    let emit: @Sendable (String) -> Void

    private func name(_ relative: String, in root: String) -> String {
        guard sourceIsFolder, !relative.isEmpty else { return root }
        return root.hasSuffix("/") || root.hasSuffix(":") ? root + relative : root + "/" + relative
    }

    func print(_ event: CopyEvent) {
        switch event {
        case .failed(let path, let operation, let side, let item, let error):
            let shown = item != path ? item : name(path, in: side == .destination ? destination : source)
            emit("\(operation) \(shown): \(ErrorMessage.reason(for: error))")
        case .skipped(let path, let reason):
            if reason.leavesItemOut {
                if !quiet { emit("\(operation) \(name(path, in: source)): skipped: \(reason)") }
            } else if verbose {
                emit("\(operation) \(name(path, in: source)): skipped: \(reason)")
            }
        case .wouldDo(let action, let path):
            let shown = action == .mkdir && path.isEmpty ? destination : name(path, in: action.isAtDestination ? destination : source)
            StandardOutput.writeRaw(Data("\(action.rawValue) \(Format.shown(shown))\n".utf8))
        case .retrying(let path, let attempt, let delay, let error):
            if !quiet { emit("\(operation) \(name(path, in: source)): attempt \(attempt) failed (\(error)); retrying in \(Format.duration(delay))") }
        case .notice(let text):
            if !quiet { emit(text) }
        case .detail(let text):
            if verbose { emit(text) }
        case .copied(let path, let bytes):
            if verbose { emit("\(operation == "move" ? "moved" : "copied") \(name(path, in: source)) (\(Format.bytes(bytes)))") }
        case .deleted(let path):
            if verbose { emit("deleted \(name(path, in: destination))") }
        case .createdFolder:
            break
        }
    }
}

/// The final summary: always on stderr (unless --quiet), and as JSON on stdout with --json.
enum SummaryPrinter {
    /// `prefix` starts the stderr line; `extra` adds keys to the JSON (`finalize`'s `chunks`).
    static func print(_ summary: CopySummary, operation: String, json: Bool, quiet: Bool, prefix: String = "",
                      extra: [String: JSONField] = [:]) {
        let seconds = summary.elapsed.inSeconds
        if json {
            let fields: [String: JSONField] = [
                "copied": .integer(Int64(summary.copied)), "skipped": .integer(Int64(summary.skipped)),
                "failed": .integer(Int64(summary.failed)), "deleted": .integer(Int64(summary.deleted)),
                "bytes": .integer(summary.bytes), "elapsed_seconds": .number(seconds), "dry_run": .boolean(summary.dryRun),
            ]
            StandardOutput.writeRaw(Data((JSON.encode(fields.merging(extra) { first, _ in first }) + "\n").utf8))
        }
        guard !quiet else { return }
        let verb = operation == "move" ? "moved" : "copied"
        // A plan's chunk may write ranges of split files, which `finalize` counts as copied.
        let ranges = summary.ranges.filter(\.written).count
        let rangeText = ranges == 0 ? "" : " and \(ranges) range\(ranges == 1 ? "" : "s") of split files"
        var line = "\(prefix)\(summary.dryRun ? "dry run: would have " : "")\(verb) \(summary.copied) file\(summary.copied == 1 ? "" : "s")\(rangeText) "
            + "(\(Format.bytes(summary.bytes))), skipped \(summary.skipped), failed \(summary.failed)"
        if operation == "sync" { line += ", deleted \(summary.deleted)" }
        line += String(format: ", %.1fs", seconds)
        if seconds > 0, summary.bytes > 0 { line += ", \(Format.bytes(Int64(saturating: Double(summary.bytes) / seconds)))/s" }
        Diagnostics.printLine(line)
    }
}

/// Sizes written by people: `1048576`, `64K`, `256M`, `1G`, `2T` (powers of 1024; `KiB`/`MB` style
/// suffixes and a trailing `B` accepted too).
enum ByteSize {
    static func parse(_ text: String) -> Int64? {
        var digits = Substring(text.trimmingCharacters(in: .whitespaces).uppercased())
        if digits.hasSuffix("IB") { digits = digits.dropLast(2) } else if digits.hasSuffix("B") { digits = digits.dropLast() }
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var scale: Int64 = 1
        if let last = digits.last, let unit = units[last] {
            scale = unit
            digits = digits.dropLast()
        }
        guard let value = Double(digits), value >= 0, value * Double(scale) < 9e18 else { return nil }
        return Int64(value * Double(scale))
    }
}
