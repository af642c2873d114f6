import ArgumentParser
import Foundation
import StorageGateway

struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Compare two folders: files missing, extra or different at DST. Exit 1 when they differ.",
        discussion: HelpText.reflow("""
        Files are compared by size, and by modification time where the destination keeps exact times.
        --checksum compares files of the same size by content hash instead (where both sides have one).
        Each side is listed folder by folder; --checkers files are compared at once.
        Lines are `missing PATH`, `extra PATH`, `different PATH` on stdout, then a summary on stderr.
        --json prints {missing: [...], extra: [...], different: [...], matching, errors: [...]}.
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print JSON.") var json = false
    @Flag(help: "Compare by size only.") var sizeOnly = false
    @Flag(name: [.customShort("c"), .long], help: "Compare files of the same size by content hash instead of modification time.")
    var checksum = false
    @Option(help: "Files compared at once (with --checksum, each is a hash request or a read).") var checkers = 8
    @OptionGroup(title: "Scale-out") var shards: ShardOptions
    @Argument(help: "Source: REMOTE:PATH or a local path (none with --plan).") var source: String?
    @Argument(help: "Destination: REMOTE:PATH or a local path (none with --plan).") var destination: String?

    func validate() throws {
        guard (1...256).contains(checkers) else { throw ValidationError("--checkers must be between 1 and 256") }
    }

    func run() async throws {
        let context = try CommandContext.make(global)
        guard let (source, destination) = try shards.checkArguments(source: source, destination: destination, operation: "check") else {
            try await runChunk(context)
            return
        }
        let from = try context.location(source)
        let to = try context.location(destination)
        let sourceProvider = try await context.provider(for: from, operation: "check")
        let destinationProvider = try await context.provider(for: to, operation: "check")
        let report = try await context.perform("check", from) {
            var options = CopyOptions(checkers: checkers, sizeOnly: sizeOnly)
            options.checksum = checksum
            options.hashShard = shards.parsedHashShard
            return try await CopyEngine(options: options).check(
                source: TransferEndpoint(provider: sourceProvider, path: from.path, displayName: from.original),
                destination: TransferEndpoint(provider: destinationProvider, path: to.path, displayName: to.original))
        }
        try Self.print(report, json: json, global: global)
    }

    /// `check --plan PLAN --shard K`: the chunk's files compared (extras are found by `finalize`).
    private func runChunk(_ context: CommandContext) async throws {
        guard let planArgument = shards.plan else { return }
        if checksum || sizeOnly {
            Diagnostics.printLine("check --plan: \(checksum ? "--checksum" : "--size-only") is set when the plan is made (gateway plan --mode check), not per worker")
            throw ExitCode(2)
        }
        let worker = try await PlanWorker.open(context, plan: planArgument, mode: .check, chunk: try shards.chunkIndex(), operation: "check")
        if let done = try await worker.alreadyDone(operation: "check") {
            if !global.quiet { Diagnostics.printLine("\(worker.name) is already done (\(done.matching ?? 0) matching, on \(done.host)); nothing to do") }
            return
        }
        let (sourceEndpoint, target) = try await worker.endpoints(operation: "check")
        let options = worker.plan.options.applied(to: CopyOptions(checkers: checkers))
        var report = CheckReport()
        _ = try await worker.run(operation: "check", dryRun: false) { chunk, marker in
            report = try await CopyEngine(options: options).check(chunk: chunk, source: sourceEndpoint, destination: target)
            marker.record(report)
        }
        // The chunk's differences are its findings: `finalize` reports them all (exit 1 there).
        // A worker fails only when files could not be compared, so a scheduler retries just that.
        try Self.print(report, json: json, global: global, differencesFail: false)
    }

    /// Prints a report: lines or JSON on stdout, notices and the summary on stderr; exit 1 when
    /// the two sides differ (with `differencesFail` false, only when files could not be compared).
    static func print(_ report: CheckReport, json: Bool, global: GlobalOptions, differencesFail: Bool = true) throws {
        let out = StandardOutput()
        if json {
            out.line(JSON.encode([
                "missing": JSONField.array(report.missing.map(JSONField.string)), "extra": .array(report.extra.map(JSONField.string)),
                "different": .array(report.different.map(JSONField.string)), "matching": .integer(Int64(report.matching)),
                "errors": .array(report.errors.map(JSONField.string)),
            ]))
        } else {
            for path in report.missing { out.line("missing \(Format.shown(path))") }
            for path in report.extra { out.line("extra \(Format.shown(path))") }
            for path in report.different { out.line("different \(Format.shown(path))") }
        }
        out.flush()
        for notice in report.notices { Diagnostics.printLine(notice) }
        if global.verbose { for detail in report.details { Diagnostics.printLine(detail) } }
        for error in report.errors { Diagnostics.printLine("check \(error)") }
        if !global.quiet {
            let differences = report.missing.count + report.extra.count + report.different.count
            Diagnostics.printLine("\(differences) difference\(differences == 1 ? "" : "s") (\(report.missing.count) missing, "
                                  + "\(report.extra.count) extra, \(report.different.count) different), \(report.matching) matching")
        }
        if differencesFail ? !report.isIdentical : !report.errors.isEmpty { throw ExitCode(1) }
    }
}
