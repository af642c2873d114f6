import Foundation
@testable import GatewayState
import GatewayCore
@testable import GatewayTestSupport
import Testing

/// The local state store: one writing process per file, WAL, migrations, damaged files.
@Suite("State store")
struct StateStoreTests {
    static func folder() throws -> String {
        var template = Array("/tmp/gateway-state-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        return String(cString: made)
    }

    static let schema = StateSchema(name: "test", migrations: [
        "CREATE TABLE items(name TEXT PRIMARY KEY, size INTEGER) WITHOUT ROWID;",
        "ALTER TABLE items ADD COLUMN note TEXT;",
    ])

    @Test("a store held by another process is a clear error naming it; it opens once released")
    func heldByAnotherProcess() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/held.sqlite"
        // Another process holds the same kind of lock (flock(2)) on the lock file, as another gateway would.
        // It says "locked" on stdout once it holds the lock: the test waits for that line, not a guessed while.
        let holder = try ChildProcess.spawn("/usr/bin/python3", ["-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
                                            + "fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(30)", path + ".lock"],
                                            stdout: .pipe)
        defer { holder.signal(SIGKILL); holder.waitUntilExit() }
        var said = [UInt8](repeating: 0, count: 64)
        let count = read(holder.output!, &said, said.count)  // blocks until the line (or EOF if python died)
        #expect(String(decoding: said.prefix(max(count, 0)), as: UTF8.self).hasPrefix("locked"), "the holder never took the lock")
        do {
            _ = try StateStore.open(path: path, schema: Self.schema)
            Issue.record("a held store must not open")
        } catch let error as FileProviderError {
            guard case .stateStoreUnavailable(let failedPath, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failedPath == path)
            #expect(reason.contains("in use by another gateway process"), "\(reason)")
            #expect(ErrorMessage.reason(for: error).contains("GATEWAY_STATE_DIR"))
        }
        let killedAt = ContinuousClock.now
        holder.signal(SIGKILL)
        await holder.exited()
        #expect(ContinuousClock.now - killedAt < .seconds(5))
        let store = try StateStore.open(path: path, schema: Self.schema)
        // The lock file names the holder.
        let pid = try String(contentsOfFile: path + ".lock", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(pid == String(getpid()))
        #expect(try store.withDatabase { try $0.text("PRAGMA journal_mode") } == "wal")
    }

    @Test("migrations run once, in order; a store from a newer schema is refused; the id survives reopening")
    func migrations() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/m.sqlite"
        var id: String
        do {
            let first = try StateStore.open(path: path, schema: StateSchema(name: "test", migrations: [Self.schema.migrations[0]]))
            try first.write { try $0.run("INSERT INTO items(name, size) VALUES ('a', 1)") }
            id = first.storeID
        }
        do {
            let second = try StateStore.open(path: path, schema: Self.schema)
            #expect(second.storeID == id)
            #expect(try second.withDatabase { try $0.integer("PRAGMA user_version") } == 2)
            try second.write { try $0.run("UPDATE items SET note = 'kept' WHERE name = 'a'") }
            #expect(try second.withDatabase { try $0.text("SELECT note FROM items") } == "kept")
        }
        do {
            _ = try StateStore.open(path: path, schema: StateSchema(name: "test", migrations: [Self.schema.migrations[0]]))
            Issue.record("a store written by a newer schema must be refused")
        } catch {
            #expect(ErrorMessage.reason(for: error).contains("newer"), "\(error)")
        }
    }

    @Test("a damaged file is a clear error, not a crash")
    func damaged() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/bad.sqlite"
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        do {
            _ = try StateStore.open(path: path, schema: Self.schema)
            Issue.record("a damaged file must not open")
        } catch {
            let reason = ErrorMessage.reason(for: error)
            #expect(reason.contains("bad.sqlite"), "\(reason)")
        }
    }

    @Test("hostile anchors are expired, never trusted: garbage, huge, negative positions, other versions")
    func hostileAnchors() throws {
        for bytes in [Data(), Data("null".utf8), Data(repeating: 0x7b, count: 100_000), Data("{\"version\": 2}".utf8)] {
            #expect(throws: FileProviderError.self) { _ = try MonitorAnchor.decode(SyncAnchor(rawValue: bytes)) }
        }
        let good = MonitorAnchor(remote: "r", folder: "/f", recursive: true, store: "s", position: 7, caughtUp: true)
        #expect(try MonitorAnchor.decode(good.encoded()) == good)
    }

    @Test("times and sizes from servers never trap: nanoseconds saturate")
    func saturation() {
        #expect(SnapshotEntry.nanoseconds(Date(timeIntervalSince1970: 1e300)) == Int64.max)
        #expect(SnapshotEntry.nanoseconds(Date(timeIntervalSince1970: -1e300)) == Int64.min)
        #expect(SnapshotEntry.nanoseconds(Date(timeIntervalSince1970: .nan)) == 0)
        #expect(SnapshotEntry.nanoseconds(Date(timeIntervalSince1970: 1.5)) == 1_500_000_000)
        #expect(SnapshotEntry.strongTag("W/\"abc\"") == "\"abc\"")
    }
}
