import Foundation

/// `mount.sqlite` in the local state store (``StateLocation``): what mounts and
/// ``FileProviderCache``s keep across runs, each on the rows of its own cache folder (which the
/// folder's lock makes its alone). ``UploadQueue``: uploads owed; ``PinList``: pinned paths;
/// ``MountAnchors``: where each mount's change monitor got to; ``CacheIndex``: what a
/// ``FileProviderCache``'s files hold; ``ChangeJournal``: folder changes made offline;
/// ``FolderListings``: the last listing of each folder, for work offline.
enum MountStateFile {
    static let schema = StateSchema(name: "mount", migrations: [
        """
        CREATE TABLE mount_uploads(
            cache_folder TEXT NOT NULL,
            cache_file TEXT NOT NULL,
            remote TEXT NOT NULL,
            path TEXT NOT NULL,
            modified REAL,
            queued REAL NOT NULL,
            PRIMARY KEY(cache_folder, cache_file)
        ) WITHOUT ROWID;
        """,
        """
        CREATE TABLE mount_pins(
            cache_folder TEXT NOT NULL,
            path TEXT NOT NULL,
            PRIMARY KEY(cache_folder, path)
        ) WITHOUT ROWID;
        """,
        """
        CREATE TABLE mount_anchors(
            cache_folder TEXT NOT NULL PRIMARY KEY,
            remote TEXT NOT NULL,
            root TEXT NOT NULL,
            anchor TEXT NOT NULL,
            saved REAL NOT NULL
        ) WITHOUT ROWID;
        """,
        """
        CREATE TABLE cache_entries(
            cache_folder TEXT NOT NULL,
            file TEXT NOT NULL,
            path TEXT NOT NULL,
            version TEXT NOT NULL,
            size INTEGER NOT NULL,
            ranges TEXT NOT NULL,
            PRIMARY KEY(cache_folder, file)
        ) WITHOUT ROWID;
        """,
        """
        CREATE TABLE mount_changes(
            cache_folder TEXT NOT NULL,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            path TEXT NOT NULL,
            target TEXT,
            version TEXT,
            folder INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY(cache_folder, seq)
        ) WITHOUT ROWID;
        """,
        """
        CREATE TABLE mount_listed(
            cache_folder TEXT NOT NULL,
            folder TEXT NOT NULL,
            PRIMARY KEY(cache_folder, folder)
        ) WITHOUT ROWID;
        CREATE TABLE mount_listing(
            cache_folder TEXT NOT NULL,
            folder TEXT NOT NULL,
            name TEXT NOT NULL,
            type TEXT NOT NULL,
            size INTEGER,
            modified REAL,
            version TEXT,
            PRIMARY KEY(cache_folder, folder, name)
        ) WITHOUT ROWID;
        """,
    ])

    /// The file in the state folder `directory`, shared by every mount on the machine.
    static func open(directory: URL) throws -> StateStore {
        try StateStore.open(path: directory.appendingPathComponent("mount.sqlite").path, schema: schema, exclusive: false)
    }
}
