import ArgumentParser
import Foundation
import StorageGateway

struct UndoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "undo",
        abstract: "Revert the last command that changed something (or run ID), from the undo journal.",
        discussion: HelpText.reflow("""
        Every command that changes a remote (rm, mkdir, rcat, copy, move, sync) records what it did in
        the undo journal ($XDG_STATE_HOME/gateway/undo.sqlite), as one numbered run. `gateway undo`
        reverts the most recent run, newest change first: removed and replaced items come back from
        the remote's trash, moves go back, what was created goes to the trash.

        Undo is safe: it refuses to touch an item that changed after the run (its size, time or
        version differs) or a place taken again, names it, and goes on with the others. Items removed
        permanently (--no-trash, or "trash": false) cannot come back.

        Exit codes: 0 all reverted, 1 something could not be reverted (each named on stderr).

        Examples:
          gateway undo --list
          gateway undo --dry-run
          gateway undo
          gateway undo 12
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(help: "List recent runs (id, time, command, items, whether still undoable).") var list = false
    @Flag(help: "With --list: one JSON array of {id, started, finished, command, items, undoable_items, undoable, undo_of, undone_by, in_progress}.")
    var json = false
    @Flag(help: "Print what would be reverted; change nothing.") var dryRun = false
    @Option(help: "Runs shown by --list.") var limit = 20
    @Argument(help: "The run to revert (see --list); the most recent undoable run by default.") var id: Int64?

    func validate() throws {
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 10000") }
        if json && !list { throw ValidationError("--json goes with --list") }
        if list && id != nil { throw ValidationError("give either --list or a run ID") }
    }

    func run() async throws {
        let context = try CommandContext.make(global)
        let journal: UndoJournal
        do {
            journal = try UndoJournal.open(directory: context.stateDirectory)
        } catch {
            throw Diagnostics.fail(operation: "undo", item: nil, error: error)
        }
        if list { return try printList(journal) }
        let run: UndoRun
        do {
            if let id {
                guard let found = try journal.run(id: id) else {
                    Diagnostics.printLine("undo: no run \(id) in the journal (see gateway undo --list)")
                    throw ExitCode(1)
                }
                run = found
            } else {
                guard let latest = try journal.latestUndoableRun() else {
                    Diagnostics.printLine("undo: nothing to undo")
                    throw ExitCode(1)
                }
                run = latest
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw Diagnostics.fail(operation: "undo", item: nil, error: error)
        }
        if run.undoOf != nil {
            Diagnostics.printLine("undo: run \(run.id) is itself an undo; its changes are in the trash (gateway trash list)")
            throw ExitCode(1)
        }
        if let by = run.undoneBy {
            Diagnostics.printLine("undo: run \(run.id) was undone already (by run \(by))")
            throw ExitCode(1)
        }
        if run.isInProgress {
            Diagnostics.printLine("undo: run \(run.id) (\(run.command)) is still going (pid \(run.pid ?? 0)); undo it when it has finished")
            throw ExitCode(1)
        }
        try await revert(run, journal: journal, context: context)
    }

    private func printList(_ journal: UndoJournal) throws {
        let runs = try journal.runs(limit: limit)
        let out = StandardOutput()
        if json {
            let values: [JSONField] = runs.map { run in
                .object([
                    "id": .integer(run.id), "started": JSONField(Format.iso8601(run.started)),
                    "finished": JSONField(Format.iso8601(run.finished)), "command": .string(run.command),
                    "items": .integer(Int64(run.recordCount)), "undoable_items": .integer(Int64(run.pendingCount)),
                    "undoable": .boolean(run.isUndoable), "undo_of": JSONField(run.undoOf), "undone_by": JSONField(run.undoneBy),
                    "in_progress": .boolean(run.isInProgress),
                ])
            }
            out.line(JSON.encode(values))
            return
        }
        for run in runs {
            let status: String
            if let of = run.undoOf { status = "undo of \(of)" }
            else if let by = run.undoneBy { status = "undone by \(by)" }
            else if run.isInProgress { status = "in progress" }
            else if run.pendingCount == 0 { status = "not undoable" }
            else { status = "undoable" }
            out.line("\(run.id)\t\(Format.listingDate(run.started))\t\(run.recordCount) item(s)\t\(status)\t\(Format.shown(run.command))")
        }
    }

    /// Reverts `run`'s records, newest first, a page at a time.
    private func revert(_ run: UndoRun, journal: UndoJournal, context: CommandContext) async throws {
        let out = StandardOutput()
        defer { out.flush() }
        let undoRun = dryRun ? nil : try? journal.beginRun(command: JournalRecorder.commandLine(), undoing: run.id)
        var providers: [String: any FileProviderUndoable] = [:]
        var failures = 0
        var lost = 0
        var reverted = 0
        var before: Int64?
        while true {
            let page = try journal.entries(run: run.id, before: before, limit: 500)
            guard let last = page.last else { break }
            before = last.seq
            for entry in page where entry.state != .undone {
                let place = Self.name(entry.remote, entry.record.path)
                guard entry.record.isUndoable else {
                    // Reported, but no reason to keep the run open: nothing will bring it back.
                    Diagnostics.printLine("undo \(place): \(entry.record.summary); it cannot be undone")
                    lost += 1
                    continue
                }
                if dryRun {
                    out.line("would " + Self.describe(entry, done: false))
                    continue
                }
                do {
                    let key = entry.remote ?? ""
                    let provider: any FileProviderUndoable
                    if let known = providers[key] {
                        provider = known
                    } else {
                        let location = RemoteLocation(remote: entry.remote, path: "/")
                        let opened = try await context.resolver.provider(for: location)
                        guard let undoable = opened as? any FileProviderUndoable else {
                            throw FileProviderError.unsupported(operation: "undo", path: entry.record.path)
                        }
                        providers[key] = undoable
                        provider = undoable
                    }
                    try await provider.undo(entry.record)
                    try? journal.mark(run: run.id, seq: entry.seq, .undone)
                    reverted += 1
                    out.line(Self.describe(entry, done: true))
                } catch {
                    try? journal.mark(run: run.id, seq: entry.seq, .failed)
                    failures += 1
                    Diagnostics.printLine("undo \(place): \(ErrorMessage.reason(for: error))")
                }
            }
        }
        if let undoRun {
            try? journal.finish(run: undoRun)
            if failures == 0 { try? journal.markUndone(run: run.id, by: undoRun) }
        }
        if !global.quiet {
            let verb = dryRun ? "would revert" : "reverted"
            Diagnostics.printLine("undo: \(verb) \(dryRun ? run.pendingCount : reverted) change(s) of run \(run.id) (\(run.command))"
                                  + (failures + lost > 0 ? "; \(failures + lost) could not be reverted" : ""))
        }
        if failures + lost > 0 { throw ExitCode(1) }
    }

    /// `remote:path`, or the bare path for the local file system.
    static func name(_ remote: String?, _ path: String) -> String {
        Format.shown(RemoteLocation(remote: remote, path: path).original)
    }

    /// What reverting `entry` does, as printed.
    static func describe(_ entry: JournalEntry, done: Bool) -> String {
        let record = entry.record
        let place = name(entry.remote, record.path)
        switch record.operation {
        case .remove: return (done ? "restored " : "restore ") + place
        case .overwrite: return (done ? "restored the previous " : "restore the previous ") + place
        case .move: return (done ? "moved " : "move ") + "\(place) back to \(name(entry.remote, record.source ?? "?"))"
        case .create: return (done ? "removed " : "remove ") + "\(place) (to the trash)"
        }
    }
}
