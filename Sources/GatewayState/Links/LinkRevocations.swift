public import Foundation

/// Revoked public links, in the local state store (`links.sqlite`): revoking an item's links
/// records the time, and every link to it made before then is refused from then on (404). Links
/// made afterwards work again.
public final class LinkRevocations: Sendable {
    private let store: StateStore

    /// The revocations in the state folder `directory` (created on first use), shared by every
    /// gateway process using it.
    public static func open(directory: URL) throws -> LinkRevocations {
        LinkRevocations(store: try StateStore.open(path: directory.appendingPathComponent("links.sqlite").path, schema: schema, exclusive: false))
    }

    private init(store: StateStore) { self.store = store }

    static let schema = StateSchema(name: "links", migrations: [
        """
        CREATE TABLE revocations(
            remote TEXT NOT NULL,
            path TEXT NOT NULL,
            revoked_ms INTEGER NOT NULL,
            PRIMARY KEY(remote, path)
        ) WITHOUT ROWID;
        """,
    ])

    /// Revokes every link to `path` of `remote` made up to `now`.
    public func revoke(remote: String, path: String, now: Date = Date()) throws {
        let milliseconds = Int64(clamping: LinkToken.milliseconds(now))
        try store.write { database in
            try database.run("INSERT INTO revocations(remote, path, revoked_ms) VALUES(?, ?, ?) "
                                 + "ON CONFLICT(remote, path) DO UPDATE SET revoked_ms = max(revoked_ms, excluded.revoked_ms)",
                                 [.text(remote), .text(path), .integer(milliseconds)])
        }
    }

    /// Whether the link `token` names was revoked after it was made.
    public func isRevoked(_ token: LinkToken) throws -> Bool {
        guard let revoked = try revokedMilliseconds(remote: token.remote, path: token.path) else { return false }
        return revoked >= token.issuedMilliseconds
    }

    /// When the links to `path` of `remote` were last revoked, in milliseconds since 1970.
    public func revokedMilliseconds(remote: String, path: String) throws -> UInt64? {
        try store.withDatabase { database in
            try database.integer("SELECT revoked_ms FROM revocations WHERE remote = ? AND path = ?", [.text(remote), .text(path)])
                .map { UInt64(clamping: $0) }
        }
    }
}
