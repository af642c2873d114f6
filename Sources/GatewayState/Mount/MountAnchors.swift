public import Foundation
public import GatewayCore

/// Where a mount's change monitor got to, by cache folder, kept in the state store
/// (`mount.sqlite`): the next mount with the folder asks the remote only for what changed since
/// (one `sync-collection` report, or one polling round against the stored snapshot), instead of
/// taking a fresh anchor (a walk of the whole tree) before it mounts.
public final class MountAnchors: Sendable {
    private let store: StateStore
    /// The cache folder whose anchor this is.
    public let cacheFolder: String

    /// The anchor of the cache folder `cacheFolder`, in the state folder `directory`.
    public static func open(directory: URL, cacheFolder: String) throws -> MountAnchors {
        MountAnchors(store: try MountStateFile.open(directory: directory), cacheFolder: cacheFolder)
    }

    private init(store: StateStore, cacheFolder: String) {
        self.store = store
        self.cacheFolder = cacheFolder
    }

    /// The anchor saved for the folder `root` of the remote `remote` (`nil`: none, or one of another
    /// remote or folder).
    public func anchor(remote: String, root: String) throws -> SyncAnchor? {
        try store.withDatabase { database in
            let statement = try database.statement("SELECT remote, root, anchor FROM mount_anchors WHERE cache_folder = ?", [.text(cacheFolder)])
            defer { statement.reset() }
            guard try statement.step(), statement.text(0) == remote, statement.text(1) == root,
                  let text = statement.text(2), let data = Data(base64Encoded: text) else { return nil }
            return SyncAnchor(rawValue: data)
        }
    }

    /// Saves `anchor` (everything up to it is applied) for the folder `root` of `remote`.
    public func save(_ anchor: SyncAnchor, remote: String, root: String, date: Date = Date()) throws {
        try store.write { database in
            try database.run("INSERT OR REPLACE INTO mount_anchors(cache_folder, remote, root, anchor, saved) VALUES (?, ?, ?, ?, ?)",
                             [.text(cacheFolder), .text(remote), .text(root), .text(anchor.rawValue.base64EncodedString()),
                              .real(date.timeIntervalSince1970)])
        }
    }

    /// Forgets the anchor (it expired).
    public func clear() throws {
        try store.write { database in try database.run("DELETE FROM mount_anchors WHERE cache_folder = ?", [.text(cacheFolder)]) }
    }
}
