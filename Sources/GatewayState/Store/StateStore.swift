#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayCore
import Synchronization

/// The tables one kind of state keeps in a store, as an ordered list of migrations.
///
/// A store records how many migrations it has run (`PRAGMA user_version`) and runs the rest when it
/// is opened. Migrations are only ever appended.
package struct StateSchema: Sendable {
    /// Names the kind of state, for messages (`"monitor"`).
    package var name: String
    /// SQL scripts, run in order, each once per store.
    package var migrations: [String]

    package init(name: String, migrations: [String]) {
        self.name = name
        self.migrations = migrations
    }
}

/// The local state store: one SQLite database file (write-ahead log, so a crash loses nothing that
/// was committed), written by one process at a time.
///
/// The gateway's local state (change-monitor snapshots and anchors; undo journals and caches use the
/// same design) lives in such files under ``StateLocation``. Opening a store takes an exclusive
/// lock on `FILE.lock` that lasts while the store is open; a second process gets
/// ``FileProviderError/stateStoreUnavailable(path:reason:)`` naming the holder's process id. Inside
/// one process the same store is shared (``open(path:schema:)``).
package final class StateStore: Sendable {
    /// The database file.
    package let path: String
    /// A random identifier made when the file was created: anchors carry it, so an anchor from a
    /// store that was since removed and made again is recognised as expired.
    package let storeID: String
    /// Guards ``database``: one statement sequence at a time.
    private let lock = NSLock()
    private nonisolated(unsafe) let database: SQLiteDatabase
    /// The writer lock's file (`-1` for a shared store).
    private let lockDescriptor: Int32

    private static let openStores = Mutex<[String: WeakStore]>([:])

    private struct WeakStore {
        weak var store: StateStore?
    }

    /// The store at `path`, shared within this process: opened (created, migrated, locked) on first use.
    ///
    /// - Parameter exclusive: take the writer lock, so one process at a time uses the store (change
    ///   monitoring, whose rounds must not interleave). Without it, processes share the file and
    ///   SQLite orders their transactions (the undo journal: two commands may run at once).
    package static func open(path: String, schema: StateSchema, exclusive: Bool = true) throws -> StateStore {
        try openStores.withLock { stores in
            if let existing = stores[path]?.store { return existing }
            let store = try StateStore(path: path, schema: schema, exclusive: exclusive)
            stores[path] = WeakStore(store: store)
            return store
        }
    }

    private init(path: String, schema: StateSchema, exclusive: Bool) throws {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        try Self.makeFolder(folder)
        lockDescriptor = exclusive ? try Self.lock(path + ".lock", store: path) : -1
        if exclusive, !FileManager.default.fileExists(atPath: path) {
            // A log left by a store that was removed would be applied to the new one.
            for leftover in [path + "-wal", path + "-shm"] { try? FileManager.default.removeItem(atPath: leftover) }
        }
        do {
            let database = try SQLiteDatabase(path: path)
            try database.execute("PRAGMA busy_timeout = 5000")
            let mode = try database.text("PRAGMA journal_mode = WAL")
            if mode?.lowercased() != "wal" {
                throw FileProviderError.stateStoreUnavailable(path: path, reason: "cannot use a write-ahead log here (journal mode \(mode ?? "unknown"))")
            }
            try database.execute("PRAGMA synchronous = NORMAL")
            try database.execute("CREATE TABLE IF NOT EXISTS store_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
            let version = try database.integer("PRAGMA user_version") ?? 0
            if version > Int64(schema.migrations.count) {
                throw FileProviderError.stateStoreUnavailable(path: path, reason: "written by a newer gateway (\(schema.name) schema \(version)); remove it to start over")
            }
            for index in Int(version)..<schema.migrations.count {
                try database.transaction {
                    // Read again under the write lock: another process sharing the store may have run it.
                    guard try database.integer("PRAGMA user_version") ?? 0 == Int64(index) else { return }
                    try database.execute(schema.migrations[index])
                    try database.execute("PRAGMA user_version = \(index + 1)")
                }
            }
            storeID = try database.transaction {
                if let existing = try database.text("SELECT value FROM store_meta WHERE key = 'store_id'") { return existing }
                let made = UUID().uuidString.lowercased()
                try database.run("INSERT INTO store_meta(key, value) VALUES ('store_id', ?)", [.text(made)])
                return made
            }
            self.database = database
        } catch {
            if lockDescriptor >= 0 { close(lockDescriptor) }
            throw error
        }
    }

    deinit {
        if lockDescriptor >= 0 { close(lockDescriptor) }
    }

    /// Runs `body` with the connection (statements outside a transaction commit one by one).
    package func withDatabase<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try lock.withLock { try body(database) }
    }

    /// Runs `body` in one write transaction.
    package func write<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try lock.withLock { try database.transaction { try body(database) } }
    }

    /// A value from the store's own key-value table.
    package func meta(_ key: String) throws -> String? {
        try withDatabase { try $0.text("SELECT value FROM store_meta WHERE key = ?", [.text(key)]) }
    }

    /// Sets a value in the store's key-value table (inside or outside a transaction).
    package static func setMeta(_ key: String, _ value: String, in database: SQLiteDatabase) throws {
        try database.run("INSERT INTO store_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                         [.text(key), .text(value)])
    }

    private static func makeFolder(_ folder: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw FileProviderError.stateStoreUnavailable(path: folder, reason: "cannot create the state folder: \(ErrorMessage.reason(for: error))")
        }
    }

    /// Takes the writer lock (`flock`), recording this process's id in the lock file.
    private static func lock(_ lockPath: String, store: String) throws -> Int32 {
        let descriptor = openLockFile(lockPath)
        guard descriptor >= 0 else {
            throw FileProviderError.stateStoreUnavailable(path: store, reason: "cannot open its lock file: \(String(cString: strerror(errno)))")
        }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(descriptor, &buffer, buffer.count, 0)
            close(descriptor)
            if failure == EWOULDBLOCK {
                let holder = count > 0 ? String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : "unknown"
                throw FileProviderError.stateStoreUnavailable(
                    path: store, reason: "in use by another gateway process (pid \(holder.isEmpty ? "unknown" : holder)); stop it, or set GATEWAY_STATE_DIR to use another state folder")
            }
            throw FileProviderError.stateStoreUnavailable(path: store, reason: "cannot lock: \(String(cString: strerror(failure)))")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return descriptor
    }
}

/// `open(2)` for the lock file (outside the type, whose `open` method would shadow it).
private func openLockFile(_ path: String) -> Int32 {
    open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
}
