import Foundation
import GatewayCore

/// Told about folders as a round meets them, so a pushing backend (inotify) can watch them.
public protocol SnapshotRoundObserver: Sendable {
    /// The round is about to list this folder (a remote path): watch it before, so nothing written
    /// to it during the listing is missed.
    func willList(folder: String)
    /// A folder (and its subtree) moved.
    func didRename(folder old: String, to new: String)
    /// A folder (and its subtree) is gone.
    func didRemove(folder: String)
}

/// One comparison of a folder tree with its snapshot: lists folders (one listing per folder, never
/// a request per file), logs what changed, and updates the snapshot.
///
/// A round either lists the whole tree (``dirtyFolders`` `nil`: polling, catch-up, after an inotify
/// queue overflow) or only the folders a pushing backend named. A removal and a creation of items
/// with the same identity (an inode; a file's ETag) in one round are reported as a rename.
/// Memory holds one folder's remembered members and the round's unpaired creations and removals,
/// never the whole tree.
struct SnapshotRound {
    let provider: any FileProviderBasic
    /// The watched folder's remote path.
    let root: String
    let recursive: Bool
    /// Relative folders to list, or `nil` for the whole tree.
    let dirtyFolders: Set<String>?
    /// Log changes (false for the first round, which only records the state).
    let logChanges: Bool
    let identity: @Sendable (FileObject) -> String?
    let observer: (any SnapshotRoundObserver)?
    let store: StateStore
    let pageSize: Int
    /// Asks a folder's changes since a token (WebDAV `sync-collection`) instead of listing it;
    /// `nil` to list every folder.
    var delta: (@Sendable (_ folder: String, _ token: String?) async throws -> FolderDelta?)? = nil
    /// Items the round passes over as if absent (the remote's trash folder).
    var skips: @Sendable (FileObject) -> Bool = { _ in false }

    /// What the round did.
    struct Outcome {
        var changes = 0
        /// New sync tokens, saved when the round ends.
        var tokens: [String: String] = [:]
        /// The server answered no delta (it has no `sync-collection`).
        var deltasUnsupported = false
    }

    /// What a folder's reading yields: members (all, or those that changed) and removed names.
    private enum Observed {
        case item(FileObject)
        case removed(String)
    }

    private struct Pending {
        var created: [(entry: SnapshotEntry, item: FileObject)] = []
        var removed: [SnapshotEntry] = []
    }

    func run() async throws -> Outcome {
        var outcome = Outcome()
        let now = Int64(Date().timeIntervalSince1970)
        var queue: [String]
        if let dirtyFolders {
            queue = try store.withDatabase { database in
                try dirtyFolders.sorted(by: >).filter { folder in
                    if folder.isEmpty { return true }
                    let known = try database.integer("SELECT 1 FROM entries WHERE parent = ? AND name = ? AND type = 1",
                                                     [.text(SnapshotEntry.parent(of: folder)), .text(SnapshotEntry.name(of: folder))])
                    return known != nil
                }
            }
        } else {
            queue = [""]
        }
        var newFolders = Set<String>()
        var fullSubtrees = Set<String>()
        let fullTree = dirtyFolders == nil
        // Removals wait until no folder is left to list: an item moved into a folder listed in a
        // later pass (a renamed or new one) is then still paired into a rename.
        var carried: [SnapshotEntry] = []
        while !queue.isEmpty {
            var pending = Pending()
            pending.removed = carried
            while let folder = queue.popLast() {
                let isNew = newFolders.remove(folder) != nil
                try Task.checkCancellation()
                let descend = try await listFolder(folder, isNew: isNew, fullTree: fullTree, fullSubtrees: fullSubtrees, pending: &pending,
                                                   newFolders: &newFolders, outcome: &outcome, now: now)
                queue.append(contentsOf: descend.reversed())
            }
            // Pair removals with creations of the same identity into renames, then record the rest.
            let settled = try settle(pending, outcome: &outcome, now: now)
            carried = settled.removals
            if recursive {
                queue.append(contentsOf: settled.renamed)
                fullSubtrees.formUnion(settled.renamed)
                queue.append(contentsOf: settled.created)
                newFolders.formUnion(settled.created)
            }
        }
        try record(removals: carried, outcome: &outcome, now: now)
        if !outcome.tokens.isEmpty {
            let tokens = outcome.tokens
            try store.write { database in
                for (folder, token) in tokens { try database.setSyncToken(folder, token) }
            }
        }
        return outcome
    }

    private func remotePath(_ relative: String) -> String {
        relative.isEmpty ? root : (root == "/" ? "/" : root + "/") + relative
    }

    /// Lists one folder and compares it with its remembered members; returns the folders to list next.
    private func listFolder(_ folder: String, isNew: Bool, fullTree: Bool, fullSubtrees: Set<String>, pending: inout Pending,
                            newFolders: inout Set<String>, outcome: inout Outcome, now: Int64) async throws -> [String] {
        let path = remotePath(folder)
        observer?.willList(folder: path)
        // Under a folder renamed in this round, every folder is read: changes inside it were named
        // by their old paths.
        let inFullSubtree = fullSubtrees.contains { folder == $0 || folder.hasPrefix($0 + "/") }
        var remembered = isNew ? [:] : try store.withDatabase { try $0.snapshotChildren(of: folder) }
        var descend: [String] = []
        var modified: [(SnapshotEntry, FileObject)] = []
        var createdHere: [(SnapshotEntry, FileObject)] = []
        var complete = true
        var nextToken: (@Sendable () -> String?)?
        var wasTruncated: (@Sendable () -> Bool)?
        do {
            var observed: PullSequence<Observed>.AsyncIterator
            if let delta, !isNew, let changes = try await readDelta(delta, folder: folder, path: path, outcome: &outcome) {
                complete = changes.isComplete
                nextToken = changes.nextToken
                wasTruncated = changes.wasTruncated
                observed = PullSequence<Observed> {
                    var entries = changes.entries.makeAsyncIterator()
                    return {
                        switch try await entries.next() {
                        case .present(let item): return .item(item)
                        case .removed(let name): return .removed(name)
                        case nil: return nil
                        }
                    }
                }.makeAsyncIterator()
            } else {
                observed = listing(path).makeAsyncIterator()
            }
            while let next = try await observed.next() {
                guard case .item(let item) = next else {
                    if case .removed(let name) = next, let old = remembered.removeValue(forKey: NameKey(name)) { pending.removed.append(old) }
                    continue
                }
                if skips(item) { continue }
                let relative = SnapshotEntry.join(folder, item.name)
                let seen = SnapshotEntry(relativePath: relative, item: item, identity: identity(item))
                if let old = remembered.removeValue(forKey: NameKey(item.name)) {
                    // Another type, or a folder made again (a new identity): the old one is gone
                    // and a new one is here, listed as new (and so watched).
                    let remade = old.type == .directory && old.identity != nil && seen.identity != nil && old.identity != seen.identity
                    if old.type != seen.type || remade {
                        pending.removed.append(old)
                        pending.created.append((seen, item))
                    } else if seen.differs(from: old) || old.identity != seen.identity || old.tag != seen.tag {
                        // Record quiet differences (a new identity, a tag where there was none) too,
                        // but only report real changes.
                        if seen.differs(from: old) {
                            modified.append((seen, item))
                        } else {
                            try store.withDatabase { try $0.snapshotUpsert(seen) }
                        }
                        if seen.type == .directory && recursive && (fullTree || inFullSubtree) { descend.append(relative) }
                    } else if seen.type == .directory && recursive && (fullTree || inFullSubtree) {
                        descend.append(relative)
                    }
                } else if !logChanges || (isNew && !pairable(pending)) {
                    // Members of a new folder (or of the first round): nothing to pair them with.
                    createdHere.append((seen, item))
                    if seen.type == .directory && recursive {
                        descend.append(relative)
                        newFolders.insert(relative)
                    }
                } else {
                    pending.created.append((seen, item))
                }
                if createdHere.count >= pageSize {
                    try record(created: createdHere, outcome: &outcome, now: now)
                    createdHere.removeAll(keepingCapacity: true)
                }
            }
        } catch where !folder.isEmpty && (error.failureKind == .notFound || error.failureKind == .notADirectory
                                           || error.failureKind == .permissionDenied) {
            // Gone (or closed) since its parent was listed: the parent's listing reports it.
            return []
        }
        if let token = nextToken?() { outcome.tokens[folder] = token }
        if wasTruncated?() == true { complete = false }
        if !complete {
            // A delta names only what changed: the other members stay, and their folders are read too.
            if recursive && (fullTree || inFullSubtree) {
                descend += remembered.values.filter { $0.type == .directory }.map(\.relativePath).sorted()
            }
            remembered.removeAll()
        }
        try record(created: createdHere, outcome: &outcome, now: now)
        pending.removed.append(contentsOf: remembered.values.sorted { $0.relativePath < $1.relativePath })
        if !modified.isEmpty {
            try store.write { database in
                for (entry, _) in modified {
                    try database.snapshotUpsert(entry)
                    if logChanges {
                        try database.logChange(.modified, path: remotePath(entry.relativePath), entry: entry, at: now)
                    }
                }
            }
            if logChanges { outcome.changes += modified.count }
        }
        return descend
    }

    /// Whether creations could pair with a removal of this round (an item moved into a new folder).
    private func pairable(_ pending: Pending) -> Bool {
        pending.removed.contains { $0.identity != nil }
    }

    /// The folder's delta since its saved token (a complete one without a token, or when the
    /// server forgot the token); `nil` when the server has no deltas.
    private func readDelta(_ delta: @Sendable (String, String?) async throws -> FolderDelta?, folder: String, path: String,
                           outcome: inout Outcome) async throws -> FolderDelta? {
        guard !outcome.deltasUnsupported else { return nil }
        let token = try store.withDatabase { try $0.syncToken(folder) }
        let changes: FolderDelta?
        do {
            changes = try await delta(path, token)
        } catch is FolderDeltaTokenInvalid {
            changes = try await delta(path, nil)
        }
        if changes == nil { outcome.deltasUnsupported = true }
        return changes
    }

    /// A folder's full listing as observed members.
    private func listing(_ path: String) -> PullSequence<Observed> {
        PullSequence.flattening(provider.contentsOfDirectory(path: path, pageSize: pageSize)) { $0.entries.map(Observed.item) }
    }

    private func record(created: [(SnapshotEntry, FileObject)], outcome: inout Outcome, now: Int64) throws {
        guard !created.isEmpty else { return }
        try store.write { database in
            for (entry, _) in created {
                if entry.type == .directory { try database.removeSubtree(entry.relativePath) }
                try database.snapshotUpsert(entry)
                if logChanges { try database.logChange(.created, path: remotePath(entry.relativePath), entry: entry, at: now) }
            }
        }
        if logChanges { outcome.changes += created.count }
    }

    /// Records a pass's renames and creations (pairing removals with creations of one identity);
    /// returns the renamed and the created folders (relative), whose members are listed next, and
    /// the removals not yet recorded.
    private func settle(_ pending: Pending, outcome: inout Outcome, now: Int64)
        throws -> (renamed: [String], created: [String], removals: [SnapshotEntry]) {
        guard !pending.created.isEmpty else { return ([], [], pending.removed) }
        func key(_ entry: SnapshotEntry) -> String? { entry.identity.map { "\(entry.type.rawValue):\($0)" } }
        var removedByIdentity: [String: Int] = [:]
        var ambiguous = Set<String>()
        for (index, entry) in pending.removed.enumerated() {
            guard let key = key(entry) else { continue }
            if removedByIdentity.updateValue(index, forKey: key) != nil { ambiguous.insert(key) }
        }
        var createdKeys: [String: Int] = [:]
        for created in pending.created {
            guard let key = key(created.entry) else { continue }
            createdKeys[key, default: 0] += 1
        }
        var pairedRemovals = Set<Int>()
        var renames: [(old: SnapshotEntry, new: SnapshotEntry)] = []
        var creations: [SnapshotEntry] = []
        for created in pending.created {
            // A file pairs only when unchanged too: file systems reuse a removed file's inode for
            // the next new one, which is no rename (a file moved and changed is then a removal
            // and a creation, which leaves a mirror right as well).
            if let key = key(created.entry), !ambiguous.contains(key), createdKeys[key] == 1, let index = removedByIdentity[key],
               !created.entry.differs(from: pending.removed[index]) {
                pairedRemovals.insert(index)
                renames.append((pending.removed[index], created.entry))
            } else {
                creations.append(created.entry)
            }
        }
        // A removal at a path that is created again (a file replaced by a folder) is recorded
        // now, before the creation; the others wait.
        let createdPaths = Set(creations.map { NameKey($0.relativePath) })
        var replaced: [SnapshotEntry] = []
        var waiting: [SnapshotEntry] = []
        for (index, entry) in pending.removed.enumerated() where !pairedRemovals.contains(index) {
            if createdPaths.contains(NameKey(entry.relativePath)) { replaced.append(entry) } else { waiting.append(entry) }
        }
        try record(removals: replaced, outcome: &outcome, now: now)
        try store.write { database in
            for (old, new) in renames {
                try database.run("DELETE FROM entries WHERE parent = ? AND name = ?",
                                 [.text(SnapshotEntry.parent(of: old.relativePath)), .text(SnapshotEntry.name(of: old.relativePath))])
                if old.type == .directory && new.type == .directory {
                    try database.moveSubtree(from: old.relativePath, to: new.relativePath)
                    try database.removeSyncTokens(under: old.relativePath)
                }
                try database.snapshotUpsert(new)
                if logChanges {
                    try database.logChange(.renamed, path: remotePath(new.relativePath), previousPath: remotePath(old.relativePath), entry: new, at: now)
                    // Moved and changed (or an inode reused by a new file): the content is news too.
                    if new.differs(from: old) { try database.logChange(.modified, path: remotePath(new.relativePath), entry: new, at: now) }
                }
            }
            for new in creations {
                if new.type == .directory { try database.removeSubtree(new.relativePath) }
                try database.snapshotUpsert(new)
                if logChanges { try database.logChange(.created, path: remotePath(new.relativePath), entry: new, at: now) }
            }
        }
        var renamedFolders: [String] = []
        for (old, new) in renames where new.type == .directory {
            observer?.didRename(folder: remotePath(old.relativePath), to: remotePath(new.relativePath))
            renamedFolders.append(new.relativePath)
        }
        if logChanges { outcome.changes += renames.count + creations.count }
        return (renamedFolders, creations.filter { $0.type == .directory }.map(\.relativePath), waiting)
    }

    /// Records removals: the entries (and a folder's subtree) are forgotten.
    private func record(removals: [SnapshotEntry], outcome: inout Outcome, now: Int64) throws {
        guard !removals.isEmpty else { return }
        try store.write { database in
            for old in removals {
                try database.snapshotRemove(old.relativePath)
                if old.type == .directory { try database.removeSyncTokens(under: old.relativePath) }
                if logChanges { try database.logChange(.removed, path: remotePath(old.relativePath), entry: old, at: now) }
            }
        }
        for old in removals where old.type == .directory {
            observer?.didRemove(folder: remotePath(old.relativePath))
        }
        if logChanges { outcome.changes += removals.count }
    }
}
