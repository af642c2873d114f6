public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import GatewayCore

/// The journal of changes the gateway made, as numbered runs of ``UndoRecord``s: what
/// `gateway undo` reverts. One SQLite file, `undo.sqlite`, in the local state store
/// (``StateLocation``), shared by every gateway process (two commands may run at once).
///
/// Each record is written (and committed) as soon as its change is done, so a run that is
/// interrupted halfway can still be undone for what it did.
public final class UndoJournal: Sendable {
    private let store: StateStore

    /// The journal in the state folder `directory` (created on first use).
    public static func open(directory: URL) throws -> UndoJournal {
        UndoJournal(store: try StateStore.open(path: directory.appendingPathComponent("undo.sqlite").path, schema: schema, exclusive: false))
    }

    private init(store: StateStore) {
        self.store = store
    }

    /// The database file.
    public var path: String { store.path }

    static let schema = StateSchema(name: "undo", migrations: [
        """
        CREATE TABLE undo_runs(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            started REAL NOT NULL,
            finished REAL,
            command TEXT NOT NULL,
            undo_of INTEGER,
            undone_by INTEGER
        );
        CREATE TABLE undo_records(
            run INTEGER NOT NULL REFERENCES undo_runs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            remote TEXT,
            record TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'done',
            PRIMARY KEY(run, seq)
        ) WITHOUT ROWID;
        """,
        // The process writing a run, so an undo does not take a run that is still going.
        "ALTER TABLE undo_runs ADD COLUMN pid INTEGER;",
    ])

    // MARK: Writing

    /// Starts a run for `command` (the command line, for listings); returns its number.
    public func beginRun(command: String, undoing: Int64? = nil, date: Date = Date()) throws -> Int64 {
        try store.write { database in
            try database.run("INSERT INTO undo_runs(started, command, undo_of, pid) VALUES (?, ?, ?, ?)",
                             [.real(date.timeIntervalSince1970), .text(command), .optional(undoing), .integer(Int64(getpid()))])
            return database.lastInsertedRowID
        }
    }

    /// Adds the record of one change made on `remote` (`nil`: a bare local path) to `run`; returns
    /// its sequence number.
    ///
    /// `confirming` lists tentative records of the same run whose changes were made since: they are
    /// confirmed in the same transaction (one commit instead of one per record).
    @discardableResult
    public func append(_ record: UndoRecord, remote: String?, run: Int64, confirming: [Int64] = []) throws -> Int64 {
        let json = String(decoding: try JSONEncoder().encode(record), as: UTF8.self)
        return try store.write { database in
            try Self.confirm(confirming, run: run, in: database)
            let next = (try database.integer("SELECT MAX(seq) FROM undo_records WHERE run = ?", [.integer(run)]) ?? 0) + 1
            try database.run("INSERT INTO undo_records(run, seq, remote, record) VALUES (?, ?, ?, ?)",
                             [.integer(run), .integer(next), .optional(remote), .text(json)])
            return next
        }
    }

    /// Marks a tentative record's change as made (``UndoRecord/isTentative`` becomes `false`).
    public func confirm(run: Int64, seq: Int64) throws {
        try confirm(run: run, sequences: [seq])
    }

    /// Marks several tentative records of `run` as made, in one transaction.
    public func confirm(run: Int64, sequences: [Int64]) throws {
        guard !sequences.isEmpty else { return }
        try store.write { try Self.confirm(sequences, run: run, in: $0) }
    }

    private static func confirm(_ sequences: [Int64], run: Int64, in database: SQLiteDatabase) throws {
        for seq in sequences {
            try database.run("UPDATE undo_records SET record = json_set(record, '$.isTentative', json('false')) WHERE run = ? AND seq = ?",
                             [.integer(run), .integer(seq)])
        }
    }

    /// Marks a run finished.
    public func finish(run: Int64, date: Date = Date()) throws {
        try store.write { try $0.run("UPDATE undo_runs SET finished = ? WHERE id = ?", [.real(date.timeIntervalSince1970), .integer(run)]) }
    }

    /// Sets one record's state (after undoing it, or failing to).
    public func mark(run: Int64, seq: Int64, _ state: JournalEntry.State) throws {
        try store.write { try $0.run("UPDATE undo_records SET state = ? WHERE run = ? AND seq = ?", [.text(state.rawValue), .integer(run), .integer(seq)]) }
    }

    /// Records that run `undoing` was undone by run `by` (when all of its records are).
    public func markUndone(run: Int64, by undo: Int64) throws {
        try store.write { try $0.run("UPDATE undo_runs SET undone_by = ? WHERE id = ?", [.integer(undo), .integer(run)]) }
    }

    /// Removes runs started before `date` with their records; returns how many.
    @discardableResult
    public func prune(before date: Date) throws -> Int {
        try store.write { database in
            let count = try database.integer("SELECT COUNT(*) FROM undo_runs WHERE started < ?", [.real(date.timeIntervalSince1970)]) ?? 0
            try database.run("DELETE FROM undo_records WHERE run IN (SELECT id FROM undo_runs WHERE started < ?)", [.real(date.timeIntervalSince1970)])
            try database.run("DELETE FROM undo_runs WHERE started < ?", [.real(date.timeIntervalSince1970)])
            return Int(count)
        }
    }

    // MARK: Reading

    /// The most recent runs, newest first.
    public func runs(limit: Int = 20) throws -> [UndoRun] {
        try store.withDatabase { database in
            let statement = try database.statement(Self.runQuery + " ORDER BY r.id DESC LIMIT ?", [.integer(Int64(max(0, limit)))])
            var runs: [UndoRun] = []
            while try statement.step() { runs.append(Self.run(from: statement)) }
            return runs
        }
    }

    /// Run `id`, or `nil`.
    public func run(id: Int64) throws -> UndoRun? {
        try store.withDatabase { database in
            let statement = try database.statement(Self.runQuery + " WHERE r.id = ?", [.integer(id)])
            defer { statement.reset() }
            return try statement.step() ? Self.run(from: statement) : nil
        }
    }

    /// The newest run that changed something, is not itself an undo, and was not undone yet (even
    /// when what it did cannot be undone: `gateway undo` then says so, rather than reaching back
    /// past it).
    public func latestUndoableRun() throws -> UndoRun? {
        try store.withDatabase { database in
            let statement = try database.statement(Self.runQuery + " WHERE r.undo_of IS NULL AND r.undone_by IS NULL ORDER BY r.id DESC")
            defer { statement.reset() }
            while try statement.step() {
                let run = Self.run(from: statement)
                if run.recordCount > 0 { return run }
            }
            return nil
        }
    }

    /// Up to `limit` records of `run` that come before `seq` (all when `nil`), newest first: the
    /// order to undo them in, a page at a time.
    public func entries(run: Int64, before seq: Int64? = nil, limit: Int = 500) throws -> [JournalEntry] {
        try store.withDatabase { database in
            let statement = try database.statement(
                "SELECT seq, remote, record, state FROM undo_records WHERE run = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
                [.integer(run), .integer(seq ?? .max), .integer(Int64(max(1, limit)))])
            var entries: [JournalEntry] = []
            while try statement.step() {
                let text = statement.text(2) ?? ""
                guard let record = try? JSONDecoder().decode(UndoRecord.self, from: Data(text.utf8)) else {
                    throw FileProviderError.stateStoreUnavailable(path: store.path, reason: "undo record \(run).\(statement.integer(0)) is damaged")
                }
                entries.append(JournalEntry(run: run, seq: statement.integer(0), remote: statement.text(1), record: record,
                                            state: JournalEntry.State(rawValue: statement.text(3) ?? "") ?? .done))
            }
            return entries
        }
    }

    private static let runQuery = """
        SELECT r.id, r.started, r.finished, r.command, r.undo_of, r.undone_by, r.pid,
               (SELECT COUNT(*) FROM undo_records x WHERE x.run = r.id),
               (SELECT COUNT(*) FROM undo_records x WHERE x.run = r.id AND x.state != 'undone'
                    AND (json_extract(x.record, '$.isPermanent') IS NULL OR json_extract(x.record, '$.isPermanent') = 0))
        FROM undo_runs r
        """

    private static func run(from statement: SQLiteStatement) -> UndoRun {
        UndoRun(id: statement.integer(0), started: Date(timeIntervalSince1970: statement.real(1)),
                finished: statement.isNull(2) ? nil : Date(timeIntervalSince1970: statement.real(2)),
                command: statement.text(3) ?? "", undoOf: statement.optionalInteger(4), undoneBy: statement.optionalInteger(5),
                pid: statement.optionalInteger(6), recordCount: Int(statement.integer(7)), pendingCount: Int(statement.integer(8)))
    }
}

/// One run of the journal: a command that changed something.
public struct UndoRun: Sendable, Hashable {
    /// Its number (`gateway undo ID`).
    public var id: Int64
    /// When it started and (if it did) finished.
    public var started: Date
    public var finished: Date?
    /// The command line.
    public var command: String
    /// The run this run undid, when it is an undo.
    public var undoOf: Int64?
    /// The undo run that reverted it.
    public var undoneBy: Int64?
    /// The process that wrote it.
    public var pid: Int64?
    /// Records in it, and how many of them can still be undone.
    public var recordCount: Int
    public var pendingCount: Int

    /// Whether `gateway undo` can still revert something of it.
    public var isUndoable: Bool { undoOf == nil && undoneBy == nil && pendingCount > 0 }

    /// Whether it has not finished and the process writing it is still alive (another command
    /// still changing things): not to be undone yet.
    public var isInProgress: Bool {
        guard finished == nil, let pid, pid > 0, pid <= Int64(Int32.max), pid != Int64(getpid()) else { return false }
        return kill(pid_t(pid), 0) == 0 || errno == EPERM
    }
}

/// One record of a run, with where it was made and what became of it.
public struct JournalEntry: Sendable, Hashable {
    /// What became of the record.
    public enum State: String, Sendable, Hashable {
        /// Done, not undone.
        case done
        /// Reverted by an undo.
        case undone
        /// An undo was refused or failed; it can be tried again.
        case failed
    }

    public var run: Int64
    public var seq: Int64
    /// The remote's name; `nil` for a bare local path.
    public var remote: String?
    public var record: UndoRecord
    public var state: State
}
