public import Foundation
public import GatewayCore
import Crypto
import Synchronization

/// Change monitoring implemented once, for every backend: a provider conforms with a few lines
/// (an identity for its state, a folder for the state store) and gets ``FileProviderMonitor``:
/// polling rounds that compare one listing per folder with a snapshot in the local state store, a
/// durable change log that anchors point into, and live streams. A backend that can push changes
/// (Local, with inotify) adds a ``ChangeSignal``; rounds then list only the folders it names.
public protocol SnapshotMonitoring: FileProviderMonitor {
    /// Identifies the remote for its state files: a scheme, host, root and user, never a secret.
    var monitorIdentity: String { get }
    /// The folder of the local state store (``StateLocation``).
    var stateDirectory: URL { get }
    /// What stays the same when an item is renamed (an inode, an MLSD `unique` fact, an ETag), or
    /// `nil` when the backend cannot tell; a removal and a creation with one identity are a rename.
    func snapshotIdentity(of item: FileObject) -> String?
    /// A source of pushed change notifications for a folder, or `nil` to poll.
    func makeChangeSignal(at path: String, recursive: Bool) throws -> (any ChangeSignal)?
    /// The direct members of `folder` that changed since `token` (all of them for a `nil` token),
    /// where the server can tell (WebDAV `sync-collection`); `nil` when it cannot, and rounds list
    /// the folder instead. Throws ``FolderDeltaTokenInvalid`` for a token the server no longer knows.
    func folderDelta(at folder: String, token: String?) async throws -> FolderDelta?
    /// Use deltas even where they are seen to leave member folders out (RFC 6578 says they name
    /// them; Xandikos does not): the user knows the tree has no folders. Default `false`.
    var trustsFolderDeltas: Bool { get }
}

extension SnapshotMonitoring {
    public func snapshotIdentity(of item: FileObject) -> String? { nil }
    public func makeChangeSignal(at path: String, recursive: Bool) throws -> (any ChangeSignal)? { nil }
    public func folderDelta(at folder: String, token: String?) async throws -> FolderDelta? { nil }
    public var trustsFolderDeltas: Bool { false }
    public var pushesChanges: Bool { false }

    public func currentAnchor(at path: String, recursive: Bool) async throws -> SyncAnchor {
        let scope = try MonitorScope.open(for: self, folder: try RemotePath.normalize(path), recursive: recursive, create: true)
        return try await scope.currentAnchor(provider: self, signal: nil)
    }

    public func changes(since anchor: SyncAnchor, pageSize: Int) async throws -> ChangePage {
        let decoded = try MonitorAnchor.decode(anchor)
        let scope = try MonitorScope.open(for: self, anchor: decoded)
        return try await scope.changes(since: decoded, pageSize: pageSize, provider: self, dirty: nil, signal: nil)
    }

    public func changes(at path: String, options: MonitorOptions) -> PullSequence<FileChangeEvent> {
        PullSequence.flattening(changePages(from: nil, at: path, options: options)) { $0.events }
    }

    /// Pages of changes: first everything since `anchor` (each page is yielded, the last one with
    /// `moreComing == false`, even when empty), then live pages (only non-empty ones) as changes are
    /// seen, each with the anchor to save. Without an anchor, watching starts from the current state.
    public func changePages(since anchor: SyncAnchor, options: MonitorOptions) -> PullSequence<ChangePage> {
        changePages(from: anchor, at: nil, options: options)
    }

    private func changePages(from anchor: SyncAnchor?, at path: String?, options: MonitorOptions) -> PullSequence<ChangePage> {
        let provider = self
        return PullSequence {
            var live = LiveMonitor(provider: provider, anchor: anchor, path: path, options: options)
            return { try await live.next() }
        }
    }
}

/// The state of one live stream: its store, its anchor, its change signal.
struct LiveMonitor<Provider: SnapshotMonitoring> {
    let provider: Provider
    var anchor: SyncAnchor?
    let path: String?
    let options: MonitorOptions
    var scope: MonitorScope?
    var signal: SignalBox?
    var catchingUp: Bool
    var pendingBatch: ChangeSignalBatch?

    /// Stops the backend's signal when the stream is dropped.
    final class SignalBox: Sendable {
        let signal: any ChangeSignal
        init(_ signal: any ChangeSignal) { self.signal = signal }
        deinit { signal.stop() }
    }

    init(provider: Provider, anchor: SyncAnchor?, path: String?, options: MonitorOptions) {
        self.provider = provider
        self.anchor = anchor
        self.path = path
        self.options = options
        self.catchingUp = anchor != nil
    }

    mutating func next() async throws -> ChangePage? {
        if scope == nil {
            let decoded = try anchor.map(MonitorAnchor.decode)
            let folder = try decoded?.folder ?? RemotePath.normalize(path ?? "/")
            let recursive = decoded?.recursive ?? options.recursive
            let opened = try decoded.map { try MonitorScope.open(for: provider, anchor: $0) }
                ?? MonitorScope.open(for: provider, folder: folder, recursive: recursive, create: true)
            // Watch before the first comparison, so nothing changed during it is missed.
            if let made = try provider.makeChangeSignal(at: folder, recursive: recursive) { signal = SignalBox(made) }
            scope = opened
            if anchor == nil { anchor = try await opened.currentAnchor(provider: provider, signal: signal?.signal) }
        }
        guard let scope, var position = try anchor.map(MonitorAnchor.decode) else { return nil }
        if catchingUp {
            let page = try await scope.changes(since: position, pageSize: 1000, provider: provider, dirty: nil, signal: signal?.signal)
            anchor = page.anchor
            catchingUp = page.moreComing
            return page
        }
        while true {
            try Task.checkCancellation()
            if !position.caughtUp {
                // More already logged: deliver it without another comparison.
                let page = try await scope.changes(since: position, pageSize: 1000, provider: provider, dirty: nil, signal: signal?.signal)
                anchor = page.anchor
                if !page.events.isEmpty { return page }
                position = try MonitorAnchor.decode(page.anchor)
                continue
            }
            var dirty: Set<String>? = nil
            if let signal {
                switch try await signal.signal.next() {
                case .everything: dirty = nil
                case .folders(let folders): dirty = Set(folders.compactMap { scope.relative($0) })
                }
            } else {
                try await Task.sleep(for: options.interval)
            }
            let page = try await scope.changes(since: position, pageSize: 1000, provider: provider, dirty: dirty, signal: signal?.signal)
            anchor = page.anchor
            position = try MonitorAnchor.decode(page.anchor)
            if !page.events.isEmpty { return page }
        }
    }
}

/// One watched folder's store, shared within the process, with one round at a time.
final class MonitorScope: Sendable {
    let store: StateStore
    let remote: String
    let folder: String
    let recursive: Bool
    private let rounds = AsyncLock()

    /// Change rows kept, newest first; older ones are pruned and anchors before them expire.
    static let retainedChanges: Int64 = 1_000_000
    /// Seconds a change is kept.
    static let retainedSeconds: Int64 = 30 * 24 * 3600

    private init(store: StateStore, remote: String, folder: String, recursive: Bool) {
        self.store = store
        self.remote = remote
        self.folder = folder
        self.recursive = recursive
    }

    static func remoteHash(_ identity: String) -> String {
        SHA256.hash(data: Data(identity.utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
    }

    static func storePath(stateDirectory: URL, remote: String, folder: String, recursive: Bool) -> String {
        let scope = SHA256.hash(data: Data("\(folder)\n\(recursive)".utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        return stateDirectory.appendingPathComponent("monitor", isDirectory: true)
            .appendingPathComponent("\(remote)-\(scope).sqlite").path
    }

    static func open<Provider: SnapshotMonitoring>(for provider: Provider, folder: String, recursive: Bool, create: Bool) throws -> MonitorScope {
        let remote = remoteHash(provider.monitorIdentity)
        let path = storePath(stateDirectory: provider.stateDirectory, remote: remote, folder: folder, recursive: recursive)
        if !create && !FileManager.default.fileExists(atPath: path) {
            throw FileProviderError.anchorExpired(path: folder, reason: "no saved state for this folder (the state store was removed)")
        }
        return try cached(path: path) {
            let store = try StateStore.open(path: path, schema: SnapshotSchema.schema)
            let recorded = try store.meta("folder")
            if recorded == nil {
                try store.write { database in
                    try StateStore.setMeta("remote", remote, in: database)
                    try StateStore.setMeta("folder", folder, in: database)
                    try StateStore.setMeta("recursive", recursive ? "1" : "0", in: database)
                }
            } else if try recorded != folder || store.meta("remote") != remote {
                throw FileProviderError.stateStoreUnavailable(path: path, reason: "belongs to another folder; remove it to start over")
            }
            return MonitorScope(store: store, remote: remote, folder: folder, recursive: recursive)
        }
    }

    static func open<Provider: SnapshotMonitoring>(for provider: Provider, anchor: MonitorAnchor) throws -> MonitorScope {
        guard anchor.remote == remoteHash(provider.monitorIdentity) else {
            throw FileProviderError.anchorExpired(path: anchor.folder, reason: "the anchor belongs to another remote")
        }
        let scope = try open(for: provider, folder: anchor.folder, recursive: anchor.recursive, create: false)
        guard scope.store.storeID == anchor.store else {
            throw FileProviderError.anchorExpired(path: anchor.folder, reason: "the state store was made again since the anchor was saved")
        }
        return scope
    }

    private static let scopes = LockedScopes()

    private static func cached(path: String, make: () throws -> MonitorScope) throws -> MonitorScope {
        try scopes.get(path, make)
    }

    /// The path of `remotePath` relative to the watched folder, or `nil` when outside it.
    func relative(_ remotePath: String) -> String? {
        if remotePath == folder { return "" }
        let prefix = folder == "/" ? "/" : folder + "/"
        guard remotePath.hasPrefix(prefix) else { return nil }
        return String(remotePath.dropFirst(prefix.count))
    }

    private func anchor(position: Int64, caughtUp: Bool) -> SyncAnchor {
        MonitorAnchor(remote: remote, folder: folder, recursive: recursive, store: store.storeID, position: position, caughtUp: caughtUp).encoded()
    }

    /// Records the state on first use, else compares the remote again; returns the newest position.
    func currentAnchor<Provider: SnapshotMonitoring>(provider: Provider, signal: (any ChangeSignal)?) async throws -> SyncAnchor {
        try await rounds.withLock {
            let recorded = try store.meta("baseline") == "done"
            try await round(provider: provider, dirty: nil, logChanges: recorded, signal: signal)
            if !recorded { try store.write { try StateStore.setMeta("baseline", "done", in: $0) } }
            return anchor(position: try store.withDatabase { try $0.headSequence() }, caughtUp: true)
        }
    }

    /// The changes after `since`; compares the remote first when the caller had caught up.
    func changes<Provider: SnapshotMonitoring>(since: MonitorAnchor, pageSize: Int, provider: Provider,
                                               dirty: Set<String>?, signal: (any ChangeSignal)?) async throws -> ChangePage {
        let pageSize = max(1, min(pageSize, 100_000))
        return try await rounds.withLock {
            if let pruned = try store.meta("pruned_through").flatMap(Int64.init), since.position < pruned {
                throw FileProviderError.anchorExpired(path: folder, reason: "its changes were pruned from the history (kept: the last \(Self.retainedChanges) changes, \(Self.retainedSeconds / 86400) days)")
            }
            let head = try store.withDatabase { try $0.headSequence() }
            if since.position > head || since.position < 0 {
                throw FileProviderError.anchorExpired(path: folder, reason: "the anchor is newer than the saved state")
            }
            if since.caughtUp && head == since.position {
                if try store.meta("baseline") != "done" {
                    throw FileProviderError.anchorExpired(path: folder, reason: "the saved state is incomplete")
                }
                try await round(provider: provider, dirty: dirty, logChanges: true, signal: signal)
                // A round that logged more than the history keeps may have pruned past the anchor.
                if let pruned = try store.meta("pruned_through").flatMap(Int64.init), since.position < pruned {
                    throw FileProviderError.anchorExpired(path: folder, reason: "more changes than the history keeps (\(Self.retainedChanges)) arrived since the anchor")
                }
            }
            return try store.withDatabase { database in
                let statement = try database.statement(
                    "SELECT seq, kind, path, previous_path, type, size, modified, tag FROM changes WHERE seq > ? ORDER BY seq LIMIT ?",
                    [.integer(since.position), .integer(Int64(pageSize) + 1)])
                var events: [FileChangeEvent] = []
                var last = since.position
                var more = false
                while try statement.step() {
                    if events.count == pageSize {
                        more = true
                        statement.reset()
                        break
                    }
                    last = statement.integer(0)
                    let kind = SnapshotSchema.kind(statement.integer(1))
                    let path = statement.text(2) ?? "/"
                    var item: FileObject?
                    if let type = statement.optionalInteger(4) {
                        let modified = statement.optionalInteger(6).map { Date(timeIntervalSince1970: Double($0) / 1e9) }
                        item = FileObject(path: path, type: SnapshotSchema.type(type), size: statement.optionalInteger(5),
                                          modificationDate: modified, versionTag: statement.text(7))
                    }
                    events.append(FileChangeEvent(kind: kind, path: path, previousPath: statement.text(3), item: item))
                }
                return ChangePage(events: events, anchor: anchor(position: last, caughtUp: !more), moreComing: more)
            }
        }
    }

    /// Every how many rounds a delta-reading scope lists its folders in full instead, to check
    /// the server's deltas (and catch what a server leaves out of them).
    static let verifyEvery = 10

    /// One round (the caller holds the round lock), then pruning of the history.
    ///
    /// Where the server reports changes since a token (WebDAV `sync-collection`), full rounds read
    /// deltas instead of listings, except every ``verifyEvery``-th round (and the first), which
    /// lists the tree and checks that the server's deltas name member folders (Xandikos leaves
    /// them out; listings are used from then on).
    private func round<Provider: SnapshotMonitoring>(provider: Provider, dirty: Set<String>?, logChanges: Bool,
                                                     signal: (any ChangeSignal)?) async throws {
        let support = try store.meta("delta_support")
        let foldersListed = try store.meta("delta_folders")
        let sinceVerify = try store.meta("rounds_since_verify").flatMap(Int.init) ?? Self.verifyEvery
        let canDelta = dirty == nil && support != "no"
        let verify = canDelta && (!logChanges || sinceVerify >= Self.verifyEvery - 1)
        let useDeltas = canDelta && !verify && (foldersListed != "no" || provider.trustsFolderDeltas)

        // A verification reads the root's complete delta before listing (so its token is older
        // than the listing: the next delta may repeat a change, never miss one).
        var evidence: (folders: Set<String>, token: String?)?
        var unsupported = false
        if verify {
            if let delta = try await provider.folderDelta(at: folder, token: nil) {
                var folders = Set<String>()
                for try await entry in delta.entries {
                    if case .present(let item) = entry, item.isDirectory { folders.insert(item.name) }
                }
                evidence = (folders, delta.nextToken())
            } else {
                unsupported = true
            }
        }

        var round = SnapshotRound(provider: provider, root: folder, recursive: recursive, dirtyFolders: dirty, logChanges: logChanges,
                                  identity: { [provider] in provider.snapshotIdentity(of: $0) }, observer: signal,
                                  store: store, pageSize: 1000)
        if useDeltas {
            round.delta = { [provider] folder, token in try await provider.folderDelta(at: folder, token: token) }
        }
        // The remote's trash folder is not watched content: trashing shows as the item's removal.
        if let trash = (provider as? any FileProviderUndoable)?.trash {
            round.skips = { item in item.isDirectory && trash.locator.isTrashFolder(item.path) }
        }
        let outcome = try await round.run()

        // Without member folders to compare, the parent's delta tells: it must name the watched
        // folder, which exists and is a folder.
        var parentListsFolder: Bool?
        if evidence != nil, folder != "/",
           try store.withDatabase({ try $0.snapshotChildren(of: "").values.contains { $0.type == .directory } }) == false,
           let delta = try await provider.folderDelta(at: RemotePath.parent(of: folder), token: nil) {
            let name = RemotePath.lastComponent(of: folder)
            var found = false
            for try await entry in delta.entries {
                if case .present(let item) = entry, item.isDirectory, item.name == name { found = true }
            }
            parentListsFolder = found
        }

        try store.write { database in
            if unsupported || outcome.deltasUnsupported { try StateStore.setMeta("delta_support", "no", in: database) }
            if let evidence {
                try StateStore.setMeta("delta_support", "yes", in: database)
                let listed = Set(try database.snapshotChildren(of: "").values.filter { $0.type == .directory }.map { SnapshotEntry.name(of: $0.relativePath) })
                if !listed.isEmpty {
                    try StateStore.setMeta("delta_folders", listed.isSubset(of: evidence.folders) ? "yes" : "no", in: database)
                } else if let parentListsFolder {
                    try StateStore.setMeta("delta_folders", parentListsFolder ? "yes" : "no", in: database)
                }
                if let token = evidence.token { try database.setSyncToken("", token) }
            }
            if canDelta {
                try StateStore.setMeta("rounds_since_verify", verify ? "0" : String(sinceVerify + 1), in: database)
            }
        }
        if outcome.changes > 0 { try prune() }
    }

    private func prune() throws {
        try store.write { database in
            let head = try database.headSequence()
            let oldest = Int64(Date().timeIntervalSince1970) - Self.retainedSeconds
            let byCount = head - Self.retainedChanges
            // Times grow with positions: look for old rows only when the oldest row is old.
            var byAge: Int64 = 0
            if let first = try database.integer("SELECT recorded_at FROM changes ORDER BY seq LIMIT 1"), first < oldest {
                byAge = try database.integer("SELECT max(seq) FROM changes WHERE recorded_at < ?", [.integer(oldest)]) ?? 0
            }
            let cut = max(byCount, byAge)
            guard cut > 0, try database.integer("SELECT 1 FROM changes WHERE seq <= ? LIMIT 1", [.integer(cut)]) != nil else { return }
            try database.run("DELETE FROM changes WHERE seq <= ?", [.integer(cut)])
            try StateStore.setMeta("pruned_through", String(cut), in: database)
        }
    }
}

/// Open scopes by store path, so one process shares a scope's store and round lock.
private final class LockedScopes: Sendable {
    private struct Weak { weak var scope: MonitorScope? }
    private let scopes = Mutex<[String: Weak]>([:])

    func get(_ path: String, _ make: () throws -> MonitorScope) throws -> MonitorScope {
        try scopes.withLock { scopes in
            if let scope = scopes[path]?.scope { return scope }
            let scope = try make()
            scopes[path] = Weak(scope: scope)
            return scope
        }
    }
}
