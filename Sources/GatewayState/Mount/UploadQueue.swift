public import Foundation
import GatewayCore

/// The uploads a mount owes its remote: one row per written file that waits in the mount's cache
/// folder, naming the remote path it goes to. One SQLite file, `mount.sqlite`, in the local
/// state store (``StateLocation``), shared by every mount on the machine (each works on the rows
/// of its own cache folder, which its lock makes its alone).
///
/// A row is written (and committed) when a file's last writer closes it, follows its renames, and
/// goes when the upload is done or the file removed; so after a crash or `kill -9` the next mount
/// with the same cache folder finds what was still owed, and sends it before anything else.
public final class UploadQueue: Sendable {
    private let store: StateStore
    /// The cache folder whose rows this queue handles.
    public let cacheFolder: String

    /// The queue of the mount whose cache folder is `cacheFolder`, in the state folder `directory`.
    public static func open(directory: URL, cacheFolder: String) throws -> UploadQueue {
        UploadQueue(store: try MountStateFile.open(directory: directory),
                    cacheFolder: cacheFolder)
    }

    private init(store: StateStore, cacheFolder: String) {
        self.store = store
        self.cacheFolder = cacheFolder
    }


    /// One upload owed.
    public struct Entry: Sendable, Hashable {
        /// The cache file's name inside the cache folder's `files`.
        public var cacheFile: String
        /// The remote's name (a cache folder holds one remote's files).
        public var remote: String
        /// The path on the remote the file goes to.
        public var path: String
        /// The modification time to give it, when one was set.
        public var modificationDate: Date?

        public init(cacheFile: String, remote: String, path: String, modificationDate: Date?) {
            self.cacheFile = cacheFile
            self.remote = remote
            self.path = path
            self.modificationDate = modificationDate
        }
    }

    /// Records (or updates) an upload owed.
    public func record(_ entry: Entry, date: Date = Date()) throws {
        try store.write { database in
            try database.run("""
                INSERT OR REPLACE INTO mount_uploads(cache_folder, cache_file, remote, path, modified, queued) VALUES (?, ?, ?, ?, ?, ?)
                """, [.text(cacheFolder), .text(entry.cacheFile), .text(entry.remote), .text(entry.path),
                      entry.modificationDate.map { .real($0.timeIntervalSince1970) } ?? .null, .real(date.timeIntervalSince1970)])
        }
    }

    /// Points every upload owed under `source` (the path or below it) at `destination` instead (a rename).
    public func move(from source: String, to destination: String) throws {
        let (lower, upper) = DeadPropertyStore.descendants(of: source)
        let cut = Int64(source.unicodeScalars.count + 1)
        try store.write { database in
            try database.run("""
                UPDATE mount_uploads SET path = ? || substr(path, ?)
                WHERE cache_folder = ? AND (path = ? OR (path >= ? AND path < ?))
                """, [.text(destination), .integer(cut), .text(cacheFolder), .text(source), .text(lower), .text(upper)])
        }
    }

    /// The upload of `cacheFile` is done, or no longer owed (the file was removed).
    public func remove(cacheFile: String) throws {
        try store.write { database in
            try database.run("DELETE FROM mount_uploads WHERE cache_folder = ? AND cache_file = ?", [.text(cacheFolder), .text(cacheFile)])
        }
    }

    /// Every upload owed from this cache folder, oldest first.
    public func entries() throws -> [Entry] {
        try store.withDatabase { database in
            let statement = try database.statement(
                "SELECT cache_file, remote, path, modified FROM mount_uploads WHERE cache_folder = ? ORDER BY queued, cache_file",
                [.text(cacheFolder)])
            defer { statement.reset() }
            var result: [Entry] = []
            while try statement.step() {
                result.append(Entry(cacheFile: statement.text(0) ?? "", remote: statement.text(1) ?? "", path: statement.text(2) ?? "",
                                    modificationDate: statement.isNull(3) ? nil : Date(timeIntervalSince1970: statement.real(3))))
            }
            return result
        }
    }
}
