public import Foundation
import GatewayCore

/// One dead property (RFC 4918 section 4): a name a client chose and the XML value it stored.
public struct DeadProperty: Sendable, Hashable {
    /// The property's namespace URI (empty for none).
    public var namespace: String
    /// The property's local name.
    public var name: String
    /// The value as XML content (text and elements, each element declaring its own namespaces),
    /// written between the property's tags.
    public var value: String

    /// A property.
    public init(namespace: String, name: String, value: String) {
        self.namespace = namespace
        self.name = name
        self.value = value
    }
}

/// Dead properties kept locally for items of a remote: one SQLite file, `properties.sqlite`, in the
/// local state store (``StateLocation``), shared by every gateway process on the machine. Two kinds
/// of scope use it: `gateway serve webdav` keeps its clients' `PROPPATCH` properties for a remote
/// that has no place for them, and the WebDAV client keeps what each upload wrote (its source
/// stamp) without asking the server to.
///
/// Properties follow their items: removing an item removes its properties and those of
/// everything below it, a move moves them, a copy copies them.
public final class DeadPropertyStore: Sendable {
    private let store: StateStore
    /// Which remote the paths belong to (its URL, say).
    public let scope: String

    /// The properties of `scope` in the state folder `directory` (created on first use).
    public static func open(directory: URL, scope: String) throws -> DeadPropertyStore {
        DeadPropertyStore(store: try StateStore.open(path: directory.appendingPathComponent("properties.sqlite").path, schema: schema, exclusive: false),
                          scope: scope)
    }

    private init(store: StateStore, scope: String) {
        self.store = store
        self.scope = scope
    }

    static let schema = StateSchema(name: "properties", migrations: [
        """
        CREATE TABLE dead_properties(
            scope TEXT NOT NULL,
            path TEXT NOT NULL,
            namespace TEXT NOT NULL,
            name TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY(scope, path, namespace, name)
        ) WITHOUT ROWID;
        """,
    ])

    /// The properties of the item at `path`, sorted by namespace and name.
    public func properties(of path: String) throws -> [DeadProperty] {
        try store.withDatabase { database in
            let statement = try database.statement(
                "SELECT namespace, name, value FROM dead_properties WHERE scope = ? AND path = ? ORDER BY namespace, name",
                [.text(scope), .text(path)])
            defer { statement.reset() }
            var result: [DeadProperty] = []
            while try statement.step() {
                result.append(DeadProperty(namespace: statement.text(0) ?? "", name: statement.text(1) ?? "", value: statement.text(2) ?? ""))
            }
            return result
        }
    }

    /// The value of the property `namespace`:`name` of each of `paths` that has it, by path: one
    /// indexed lookup per path, in one read (a listing's page at a time, never a whole tree).
    public func values(namespace: String, name: String, of paths: some Sequence<String>) throws -> [String: String] {
        try store.withDatabase { database in
            var result: [String: String] = [:]
            for path in paths {
                let statement = try database.statement(
                    "SELECT value FROM dead_properties WHERE scope = ? AND path = ? AND namespace = ? AND name = ?",
                    [.text(scope), .text(path), .text(namespace), .text(name)])
                defer { statement.reset() }
                if try statement.step(), let value = statement.text(0) { result[path] = value }
            }
            return result
        }
    }

    /// A change to one property.
    public enum Change: Sendable, Hashable {
        /// Sets (or replaces) a property.
        case set(DeadProperty)
        /// Removes a property (nothing happens when there is none).
        case remove(namespace: String, name: String)
    }

    /// Applies `changes` to the properties of `path` in order (a removal then a setting of the
    /// same name leaves it set), in one transaction: all or nothing, as `PROPPATCH` asks.
    public func update(_ path: String, _ changes: [Change]) throws {
        try store.write { database in
            for change in changes {
                switch change {
                case .set(let property):
                    try database.run("INSERT OR REPLACE INTO dead_properties(scope, path, namespace, name, value) VALUES (?, ?, ?, ?, ?)",
                                     [.text(scope), .text(path), .text(property.namespace), .text(property.name), .text(property.value)])
                case .remove(let namespace, let name):
                    try database.run("DELETE FROM dead_properties WHERE scope = ? AND path = ? AND namespace = ? AND name = ?",
                                     [.text(scope), .text(path), .text(namespace), .text(name)])
                }
            }
        }
    }

    /// Sets one property on each of many items in one transaction (a batch of records: one
    /// commit instead of one per item).
    public func set(_ properties: [(path: String, property: DeadProperty)]) throws {
        guard !properties.isEmpty else { return }
        try store.write { database in
            for (path, property) in properties {
                try database.run("INSERT OR REPLACE INTO dead_properties(scope, path, namespace, name, value) VALUES (?, ?, ?, ?, ?)",
                                 [.text(scope), .text(path), .text(property.namespace), .text(property.name), .text(property.value)])
            }
        }
    }

    /// Removes the properties of `path` and of everything below it.
    public func removeAll(under path: String) throws {
        let (lower, upper) = Self.descendants(of: path)
        try store.write { database in
            try database.run("DELETE FROM dead_properties WHERE scope = ? AND (path = ? OR (path >= ? AND path < ?))",
                             [.text(scope), .text(path), .text(lower), .text(upper)])
        }
    }

    /// Gives the properties of `source` and everything below it to `destination` (replacing what
    /// it had); `keepSource` copies instead of moving.
    public func transfer(from source: String, to destination: String, keepSource: Bool) throws {
        let (lower, upper) = Self.descendants(of: source)
        let (destinationLower, destinationUpper) = Self.descendants(of: destination)
        let cut = Int64(source.unicodeScalars.count + 1)
        try store.write { database in
            try database.run("DELETE FROM dead_properties WHERE scope = ? AND (path = ? OR (path >= ? AND path < ?))",
                             [.text(scope), .text(destination), .text(destinationLower), .text(destinationUpper)])
            try database.run("""
                INSERT OR REPLACE INTO dead_properties(scope, path, namespace, name, value)
                SELECT scope, ? || substr(path, ?), namespace, name, value FROM dead_properties
                WHERE scope = ? AND (path = ? OR (path >= ? AND path < ?))
                """, [.text(destination), .integer(cut), .text(scope), .text(source), .text(lower), .text(upper)])
            if !keepSource {
                try database.run("DELETE FROM dead_properties WHERE scope = ? AND (path = ? OR (path >= ? AND path < ?))",
                                 [.text(scope), .text(source), .text(lower), .text(upper)])
            }
        }
    }

    /// The key range of the paths below `path`: from `path/` up to (not including) `path0`
    /// (`0` follows `/`).
    static func descendants(of path: String) -> (String, String) {
        let base = path == "/" ? "" : path
        return (base + "/", base + "0")
    }
}
