import Foundation
import GatewayCore
@testable import GatewayTestSupport
@testable import GatewayState
import Testing

/// The undo journal: runs of records, read back newest first in pages, and which run `gateway
/// undo` takes; shared by processes writing at once.
@Suite("Undo journal")
struct UndoJournalTests {
    /// A journal in a new state folder (removed by the caller).
    static func freshJournal() throws -> (UndoJournal, String) {
        let folder = try StateStoreTests.folder()
        return (try UndoJournal.open(directory: URL(fileURLWithPath: folder)), folder)
    }

    @Test("records come back newest first, a page at a time; states and counts follow undo")
    func runsAndPages() throws {
        let (journal, folder) = try Self.freshJournal()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try journal.beginRun(command: "gateway mkdir d:x")
        try journal.append(UndoRecord(operation: .create, path: "/x", expected: ItemIdentity(type: .directory)), remote: "d", run: first)
        try journal.finish(run: first)
        let second = try journal.beginRun(command: "gateway sync a b:")
        for index in 1...7 {
            try journal.append(UndoRecord(operation: .remove, path: "/f\(index)", trashName: "f\(index).abc", trashVolume: "/.gateway-trash"),
                               remote: index == 7 ? nil : "b", run: second)
        }
        try journal.append(UndoRecord(operation: .remove, path: "/gone", isPermanent: true), remote: "b", run: second)

        var seen: [String] = []
        var before: Int64?
        while true {
            let page = try journal.entries(run: second, before: before, limit: 3)
            guard let last = page.last else { break }
            #expect(page.count <= 3)
            seen += page.map(\.record.path)
            before = last.seq
        }
        #expect(seen == ["/gone", "/f7", "/f6", "/f5", "/f4", "/f3", "/f2", "/f1"], "newest first")
        let entry = try #require(try journal.entries(run: second, limit: 10).first { $0.record.path == "/f7" })
        #expect(entry.remote == nil, "a bare local path has no remote")
        #expect(entry.record.trashName == "f7.abc")

        var run = try #require(try journal.run(id: second))
        #expect(run.recordCount == 8 && run.pendingCount == 7, "a permanent removal is not pending")
        #expect(try journal.latestUndoableRun()?.id == second)
        try journal.mark(run: second, seq: entry.seq, .undone)
        run = try #require(try journal.run(id: second))
        #expect(run.pendingCount == 6)

        let undo = try journal.beginRun(command: "gateway undo", undoing: second)
        try journal.markUndone(run: second, by: undo)
        #expect(try journal.latestUndoableRun()?.id == first, "an undone run and the undo itself are passed over")
        let listed = try journal.runs(limit: 10)
        #expect(listed.map(\.id) == [undo, second, first])
        #expect(listed.first?.undoOf == second && listed[1].undoneBy == undo && !listed[1].isUndoable)
        #expect(try journal.prune(before: Date().addingTimeInterval(60)) == 3)
        #expect(try journal.runs().isEmpty)
    }

    @Test("a run another live process is still writing is in progress; once it ends, it is not")
    func runInProgress() throws {
        let (journal, folder) = try Self.freshJournal()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try journal.beginRun(command: "gateway sync a b:")
        let other = try ChildProcess.spawn("/bin/sleep", ["30"])
        let update = try ChildProcess.run("/usr/bin/sqlite3", ["-cmd", ".timeout 5000", journal.path,
                                                               "UPDATE undo_runs SET pid = \(other.processIdentifier) WHERE id = \(run)"],
                                          environment: ProcessInfo.processInfo.environment)
        #expect(update.status == 0, "\(String(decoding: update.stderr, as: UTF8.self))")
        #expect(try journal.run(id: run)?.isInProgress == true)
        other.signal(SIGKILL)
        other.waitUntilExit()
        #expect(try journal.run(id: run)?.isInProgress == false, "its process is gone")
        try journal.finish(run: run)
        #expect(try journal.run(id: run)?.isInProgress == false)
    }

    @Test("two processes append to the same journal at once; nothing is lost")
    func sharedBetweenProcesses() async throws {
        let (journal, folder) = try Self.freshJournal()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try journal.beginRun(command: "gateway copy a b:")
        // Another process (sqlite3) writes to the same file meanwhile, in transactions of its own.
        let inserts = (1...200).map { "INSERT INTO undo_runs(started, command) VALUES (0, 'other \($0)');" }.joined()
        let other = try ChildProcess.spawn("/usr/bin/sqlite3", ["-cmd", ".timeout 5000", journal.path, inserts])
        for index in 1...200 {
            try journal.append(UndoRecord(operation: .create, path: "/f\(index)"), remote: "b", run: run)
        }
        await other.exited()
        #expect(other.terminationStatus == 0)
        #expect(try journal.run(id: run)?.recordCount == 200)
        #expect(try journal.runs(limit: 1000).count == 201)
    }
}
