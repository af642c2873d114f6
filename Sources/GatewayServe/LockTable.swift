import Foundation
import GatewayCore
import GatewayServeRequests
import Synchronization

/// One WebDAV write lock (RFC 4918 section 6): who holds it, over what, until when.
struct ActiveLock: Sendable, Equatable {
    /// The lock token (`urn:uuid:…`).
    let token: String
    /// The remote path the lock is rooted at.
    let root: String
    /// Whether the root is a folder (its href ends in a slash).
    let rootIsFolder: Bool
    /// `true`: the lock covers everything under `root` too (`Depth: infinity`).
    let deep: Bool
    let scope: LockScope
    /// The `DAV:owner` the client gave, as XML (empty for none).
    let owner: String
    /// How long the lock lasts from its last refresh.
    var timeout: Duration
    var expires: ContinuousClock.Instant

    /// Whether the lock covers `path`: its root, or (deep) anything under it.
    func covers(_ path: String) -> Bool {
        path == root || (deep && RemotePathPrefix.isInside(path, root))
    }
}

/// Whether a path is strictly inside a folder.
enum RemotePathPrefix {
    static func isInside(_ path: String, _ folder: String) -> Bool {
        folder == "/" ? path != "/" : path.hasPrefix(folder + "/")
    }
}

/// The server's locks, in memory: they last as long as the process (RFC 4918 lets a server drop
/// locks; clients refresh or re-lock), and the table is bounded so no client can fill memory.
final class LockTable: Sendable {
    /// Why a lock could not be taken.
    enum Refusal: Error, Equatable {
        /// A lock that conflicts (an exclusive one, or any lock against an exclusive request).
        case conflict(root: String)
        /// The table is full.
        case full
    }

    /// The longest lock a client gets, whatever it asks (`Timeout: Infinite` included).
    static let longestTimeout: Duration = .seconds(7 * 24 * 3600)
    /// A lock's timeout when the client names none.
    static let defaultTimeout: Duration = .seconds(3600)

    private let locks = Mutex<[String: ActiveLock]>([:])
    private let capacity: Int

    init(capacity: Int = 100_000) { self.capacity = capacity }

    /// Takes a new lock, or says which one is in the way.
    func lock(root: String, isFolder: Bool, deep: Bool, scope: LockScope, owner: String, timeout: Duration) -> Result<ActiveLock, Refusal> {
        locks.withLock { table in
            Self.purge(&table)
            // The conflict named is the one nearest the root, whatever order the table keeps.
            let conflicts = table.values.filter { existing in
                let overlaps = existing.covers(root) || (deep && RemotePathPrefix.isInside(existing.root, root)) || existing.root == root
                return overlaps && (existing.scope == .exclusive || scope == .exclusive)
            }
            if let nearest = conflicts.map(\.root).min(by: { ($0.count, $0) < ($1.count, $1) }) { return .failure(.conflict(root: nearest)) }
            guard table.count < capacity else { return .failure(.full) }
            let lock = ActiveLock(token: "urn:uuid:\(UUID().uuidString.lowercased())", root: root, rootIsFolder: isFolder, deep: deep, scope: scope,
                                  owner: owner, timeout: timeout, expires: .now + timeout)
            table[lock.token] = lock
            return .success(lock)
        }
    }

    /// Refreshes the lock `token` when it covers `path`; `nil` when there is no such lock.
    func refresh(_ token: String, covering path: String, timeout: Duration) -> ActiveLock? {
        locks.withLock { table in
            Self.purge(&table)
            guard var lock = table[token], lock.covers(path) else { return nil }
            lock.timeout = timeout
            lock.expires = .now + timeout
            table[token] = lock
            return lock
        }
    }

    /// Removes the lock `token` when it covers `path`; `false` when there is no such lock.
    func unlock(_ token: String, covering path: String) -> Bool {
        locks.withLock { table in
            Self.purge(&table)
            guard let lock = table[token], lock.covers(path) else { return false }
            table[token] = nil
            return true
        }
    }

    /// The locks that cover `path`.
    func locks(covering path: String) -> [ActiveLock] {
        locks.withLock { table in
            guard !table.isEmpty else { return [] }
            Self.purge(&table)
            return table.values.filter { $0.covers(path) }.sorted { $0.token < $1.token }
        }
    }

    /// The locks a change to `path` must present a token for: those covering it and, with
    /// `members`, those rooted anywhere under it (a `DELETE` or `MOVE` of a folder), and, with
    /// `parentMembership`, those rooted on its parent folder (adding or removing a member
    /// changes the folder, RFC 4918 section 7.4).
    func locks(affecting path: String, members: Bool, parentMembership: Bool) -> [ActiveLock] {
        locks.withLock { table in
            guard !table.isEmpty else { return [] }
            Self.purge(&table)
            let parent = RemotePath.parent(of: path)
            return table.values.filter { lock in
                lock.covers(path) || (members && RemotePathPrefix.isInside(lock.root, path))
                    || (parentMembership && path != "/" && lock.root == parent)
            }
        }
    }

    /// Whether `token` names a lock that covers `path`.
    func isToken(_ token: String, covering path: String) -> Bool {
        locks.withLock { table in
            guard let lock = table[token], lock.expires > .now else { return false }
            return lock.covers(path)
        }
    }

    /// Forgets every lock rooted at or under `path` (the item was removed or moved away).
    func removeAll(under path: String) {
        locks.withLock { table in
            guard !table.isEmpty else { return }
            table = table.filter { $0.value.root != path && !RemotePathPrefix.isInside($0.value.root, path) }
        }
    }

    private static func purge(_ table: inout [String: ActiveLock]) {
        let now = ContinuousClock.now
        if table.values.contains(where: { $0.expires <= now }) { table = table.filter { $0.value.expires > now } }
    }
}
