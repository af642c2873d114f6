public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GatewayCore
import Synchronization

/// The server-side uploads this machine has open (an S3 multipart upload, for one): which writer
/// started each, and a fingerprint of what it was started with.
///
/// An upload left open by an interrupted writer can be continued by the next write of the same
/// file, but only by one that would have started it the same way (the fingerprint covers the
/// metadata an upload fixes when it is created: times, hashes, storage class, part size), and
/// never while its writer still runs: a concurrent writer of the same name in this or another
/// process starts its own upload. An upload started on another machine is not in the ledger and
/// is not continued. Kept in `uploads.sqlite` in the state folder, shared by the processes of
/// the machine.
public final class UploadLedger: Sendable {
    private let store: StateStore
    /// Uploads in use by a writer of this process.
    private static let inUse = Mutex<Set<String>>([])

    /// The ledger in `directory` (created on first use).
    public static func open(directory: URL) throws -> UploadLedger {
        UploadLedger(store: try StateStore.open(path: directory.appendingPathComponent("uploads.sqlite").path, schema: schema, exclusive: false))
    }

    private init(store: StateStore) {
        self.store = store
    }

    static let schema = StateSchema(name: "uploads", migrations: [
        """
        CREATE TABLE open_uploads(
            remote TEXT NOT NULL,
            path TEXT NOT NULL,
            upload_id TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            started REAL NOT NULL,
            PRIMARY KEY(remote, upload_id)
        ) WITHOUT ROWID;
        CREATE INDEX open_uploads_by_path ON open_uploads(remote, path);
        """,
    ])

    /// Records an upload this process started, in use until ``finish(remote:uploadID:)`` or
    /// ``release(remote:uploadID:)``.
    public func record(remote: String, path: String, uploadID: String, fingerprint: String, date: Date = Date()) throws {
        try record(remote: remote, path: path, uploadID: uploadID, fingerprint: fingerprint, date: date, pid: getpid())
    }

    /// ``record(remote:path:uploadID:fingerprint:date:)`` as if by process `pid` (tests).
    func record(remote: String, path: String, uploadID: String, fingerprint: String, date: Date, pid: Int32) throws {
        if pid == getpid() { Self.inUse.withLock { _ = $0.insert(Self.token(remote, uploadID)) } }
        try store.write { database in
            try database.run("""
                INSERT INTO open_uploads(remote, path, upload_id, fingerprint, host, pid, started) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(remote, upload_id) DO UPDATE SET host = excluded.host, pid = excluded.pid
                """, [.text(remote), .text(path), .text(uploadID), .text(fingerprint), .text(TemporaryName.hostID),
                      .integer(Int64(pid)), .real(date.timeIntervalSince1970)])
        }
    }

    /// Of `candidates` (the uploads the server has open for `path`), the most recent one this
    /// machine started with `fingerprint` whose writer is gone; claimed for this process (in use
    /// until ``finish(remote:uploadID:)`` or ``release(remote:uploadID:)``). `nil` when none.
    public func claim(remote: String, path: String, fingerprint: String, candidates: Set<String>) throws -> String? {
        try store.write { database in
            let statement = try database.statement("""
                SELECT upload_id, pid, fingerprint FROM open_uploads WHERE remote = ? AND path = ? AND host = ?
                ORDER BY started DESC
                """, [.text(remote), .text(path), .text(TemporaryName.hostID)])
            var rows: [(id: String, pid: Int64, fingerprint: String)] = []
            while try statement.step() {
                if let id = statement.text(0) { rows.append((id, statement.integer(1), statement.text(2) ?? "")) }
            }
            // Records of uploads the server no longer has (completed, or aborted elsewhere) go.
            for row in rows where !candidates.contains(row.id) && !Self.running(row.pid) {
                try database.run("DELETE FROM open_uploads WHERE remote = ? AND upload_id = ?", [.text(remote), .text(row.id)])
            }
            for row in rows where row.fingerprint == fingerprint && candidates.contains(row.id) && !Self.running(row.pid) {
                let taken = Self.inUse.withLock { $0.insert(Self.token(remote, row.id)).inserted }
                guard taken else { continue }
                try database.run("UPDATE open_uploads SET pid = ? WHERE remote = ? AND upload_id = ?",
                                 [.integer(Int64(getpid())), .text(remote), .text(row.id)])
                return row.id
            }
            return nil
        }
    }

    /// The upload is completed or aborted: its record goes.
    public func finish(remote: String, uploadID: String) throws {
        Self.inUse.withLock { _ = $0.remove(Self.token(remote, uploadID)) }
        try store.write { database in
            try database.run("DELETE FROM open_uploads WHERE remote = ? AND upload_id = ?", [.text(remote), .text(uploadID)])
        }
    }

    /// The upload stays open (a transient failure) and may be continued by a later writer of this
    /// process too.
    public func release(remote: String, uploadID: String) {
        Self.inUse.withLock { _ = $0.remove(Self.token(remote, uploadID)) }
    }

    /// Whether a writer started by `pid` may still be using its upload: another running process of
    /// this machine (a writer of this process is known by ``inUse``).
    private static func running(_ pid: Int64) -> Bool {
        guard pid > 0, pid <= Int64(Int32.max) else { return false }
        if pid == Int64(getpid()) { return false }
        return kill(pid_t(pid), 0) == 0 || errno == EPERM
    }

    private static func token(_ remote: String, _ uploadID: String) -> String { remote + "\u{0}" + uploadID }
}
