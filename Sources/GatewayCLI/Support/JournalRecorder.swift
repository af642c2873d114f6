import Foundation
import ArgumentParser
import StorageGateway
import Synchronization

/// The undo journal of one command run: the run is started with the first change recorded, and
/// each record is committed at once (an interrupted run stays undoable for what it did). A journal
/// that cannot be opened costs a warning, not the command.
///
/// Confirmations of tentative records are batched: they ride with the next record's commit (or
/// go in groups of ``confirmBatch``, and at ``finish()`` and exit). A run killed before its
/// confirmations land leaves those records tentative, which `gateway undo` already handles by
/// checking that the item is what the record expects.
final class JournalRecorder: UndoRecorder, Sendable {
    private struct State {
        var journal: UndoJournal?
        var opened = false
        var run: Int64?
        var remotes: [ObjectIdentifier: String?] = [:]
        var warned = false
        var confirmations: [Int64] = []
    }

    /// Confirmations kept before they are written on their own.
    static let confirmBatch = 128
    private static let live = Mutex<[ObjectIdentifier: WeakRecorder]>([:])
    private static let exitHook: Void = { atexit { JournalRecorder.flushAll() } }()
    private struct WeakRecorder: @unchecked Sendable { weak var recorder: JournalRecorder? }

    private let state = Mutex(State())
    private let directory: URL
    private let command: String

    init(context: CommandContext, command: String = JournalRecorder.commandLine()) {
        self.directory = context.stateDirectory
        self.command = command
    }

    /// The command line as typed, for `gateway undo --list`.
    static func commandLine() -> String {
        let arguments = CommandLine.arguments.dropFirst().map { argument -> String in
            argument.contains(where: { $0 == " " || $0 == "'" || $0 == "\"" }) ? "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'" : argument
        }
        return (["gateway"] + arguments).joined(separator: " ")
    }

    /// Names the remote of `provider` (`nil` for the local file system of bare paths).
    func register(_ provider: any FileProviderBasic, location: RemoteLocation) {
        state.withLock { $0.remotes[ObjectIdentifier(provider as AnyObject)] = .some(location.remote) }
    }

    @discardableResult
    func record(_ record: UndoRecord, on provider: any FileProviderBasic) -> UndoRecordHandle? {
        let (handle, problem): (UndoRecordHandle?, String?) = state.withLock { state in
            do {
                if !state.opened {
                    state.opened = true
                    state.journal = try UndoJournal.open(directory: directory)
                    // Runs are kept a year; their trashed items stay until the trash is emptied.
                    _ = try? state.journal?.prune(before: Date().addingTimeInterval(-366 * 86_400))
                }
                guard let journal = state.journal else { return (nil, nil) }
                if state.run == nil { state.run = try journal.beginRun(command: command) }
                let remote = state.remotes[ObjectIdentifier(provider as AnyObject)] ?? .some(provider.name)
                let run = state.run!
                let seq = try journal.append(record, remote: remote, run: run, confirming: state.confirmations)
                state.confirmations = []
                return (record.isTentative ? UndoRecordHandle(run: run, sequence: seq) : nil, nil)
            } catch {
                guard !state.warned else { return (nil, nil) }
                state.warned = true
                return (nil, "undo journal: \(ErrorMessage.reason(for: error)); what this run changes cannot be undone with `gateway undo`")
            }
        }
        if let problem { Diagnostics.printLine(problem) }
        return handle
    }

    func confirm(_ handle: UndoRecordHandle) {
        let first = state.withLock { state -> Bool in
            guard handle.run == state.run else {
                try? state.journal?.confirm(run: handle.run, seq: handle.sequence)
                return false
            }
            state.confirmations.append(handle.sequence)
            if state.confirmations.count >= Self.confirmBatch { Self.flush(&state) }
            return state.confirmations.count == 1
        }
        if first {
            _ = Self.exitHook
            Self.live.withLock { $0[ObjectIdentifier(self)] = WeakRecorder(recorder: self) }
        }
    }

    /// Marks the run finished (when it recorded anything).
    func finish() {
        state.withLock { state in
            Self.flush(&state)
            if let run = state.run { try? state.journal?.finish(run: run) }
        }
        Self.live.withLock { $0[ObjectIdentifier(self)] = nil }
    }

    /// Writes the confirmations kept in memory.
    private static func flush(_ state: inout State) {
        guard let run = state.run, !state.confirmations.isEmpty else { return }
        try? state.journal?.confirm(run: run, sequences: state.confirmations)
        state.confirmations = []
    }

    /// Writes every recorder's confirmations (at exit: an interrupted command's `exit`).
    static func flushAll() {
        for recorder in live.withLock({ $0.values.compactMap(\.recorder) }) {
            recorder.state.withLock { flush(&$0) }
        }
    }

    deinit {
        state.withLock { Self.flush(&$0) }
    }
}

/// `--no-trash`, for every command that removes or replaces.
struct TrashFlags: ParsableArguments {
    @Flag(name: .customLong("no-trash"),
          help: "Remove and replace for good, instead of moving the old items to the remote's trash (then `gateway undo` cannot bring them back).")
    var noTrash = false
}
