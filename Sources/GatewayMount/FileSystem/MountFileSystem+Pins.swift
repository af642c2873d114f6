import CFuse
import Foundation
import GatewayCore
import GatewayState

/// The attribute names (``MountControl/Attribute``).
typealias GatewayAttribute = MountControl.Attribute

extension MountFileSystem {
    /// The state an item is in (``GatewayAttribute/state``). A folder has no contents to fetch:
    /// `materialized`, as a symbolic link.
    func itemState(of inode: UInt64) -> String? {
        guard let node = table.withLock({ $0.node(inode) }) else { return nil }
        if node.item.type != .file { return "materialized" }
        if conflicted.withLock({ $0.contains(inode) }) { return "conflict" }
        if let file = dirty.withLock({ $0[inode] }) {
            if file.snapshot.uploading { return "uploading" }
            return file.isModified ? "dirty" : "materialized"
        }
        guard let pin = pin(of: inode), let key = OpenFile.cacheKey(pin) else { return "placeholder" }
        return readCache.state(of: key).rawValue
    }

    /// The mount's own count of changes to the item at `path` (a cache key's generation).
    func generation(of path: String) -> UInt64 {
        guard let inode = table.withLock({ $0.resolve(path)?.inode }) else { return 0 }
        return ownChanges.withLock { $0[inode] ?? 0 }
    }

    /// Writes what the read cache holds to its index (the next mount starts with it).
    func persistCache() {
        do {
            try readCache.persist()
        } catch {
            logger.warning("the read cache's index was not updated", metadata: ["error": .string("\(error)")])
        }
    }

    /// A pinned item was removed through the mount: its pin goes with it.
    func unpinRemoved(_ path: String) {
        guard readCache.isPinRoot(path) else { return }
        do {
            try readCache.unpin(path)
        } catch {
            logger.warning("a removed item's pin was not dropped", metadata: ["path": .string(path), "error": .string("\(error)")])
        }
    }

    func getxattr(_ request: FUSERequest, inode: UInt64, name: String, size: Int) {
        switch name {
        case GatewayAttribute.state:
            guard let state = itemState(of: inode) else { return request.fail(ENOENT) }
            request.attributeValue(Data(state.utf8), size: size)
        case GatewayAttribute.pinned:
            guard let path = table.withLock({ $0.path(of: inode) }) else { return request.fail(ENOENT) }
            guard readCache.isPinned(path) else { return request.fail(ENODATA) }
            request.attributeValue(Data("1".utf8), size: size)
        case GatewayAttribute.status where inode == InodeTable.root:
            answer(request) { [self] in
                let report = await statusReport()
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                request.attributeValue(try encoder.encode(report), size: size)
            }
        default:
            // No other user.gateway.* name is kept.
            request.fail(ENODATA)
        }
    }

    func listxattr(_ request: FUSERequest, inode: UInt64, size: Int) {
        guard let path = table.withLock({ $0.path(of: inode) }) else { return request.fail(ENOENT) }
        var names = [GatewayAttribute.state]
        if readCache.isPinned(path) { names.append(GatewayAttribute.pinned) }
        // The root's status is read by name (`gateway mount-status`), not listed: `getfattr -d`
        // of the root stays short.
        request.attributeValue(Data(names.map { $0 + "\u{0}" }.joined().utf8), size: size)
    }

    func setxattr(_ request: FUSERequest, inode: UInt64, name: String, value: Data) {
        switch name {
        case GatewayAttribute.pinned:
            let text = String(decoding: value, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            if text == "0" || text == "false" || text == "no" { return removexattr(request, inode: inode, name: name) }
            answer(request) { [self] in
                guard let path = table.withLock({ $0.path(of: inode) }) else { throw POSIXError(.ENOENT) }
                try await pin(path, inode: inode)
                request.fail(0)
            }
        case GatewayAttribute.evict:
            answer(request) { [self] in
                guard let path = table.withLock({ $0.path(of: inode) }) else { throw POSIXError(.ENOENT) }
                try evict(path, inode: inode)
                request.fail(0)
            }
        case GatewayAttribute.state, GatewayAttribute.status:
            request.fail(EPERM)
        default:
            request.fail(ENOTSUP)
        }
    }

    func removexattr(_ request: FUSERequest, inode: UInt64, name: String) {
        guard name == GatewayAttribute.pinned else {
            return request.fail(name == GatewayAttribute.state || name == GatewayAttribute.status ? EPERM : ENODATA)
        }
        guard let path = table.withLock({ $0.path(of: inode) }) else { return request.fail(ENOENT) }
        if !readCache.isPinRoot(path) {
            // Pinned by a folder above it: unpinning that folder is the way.
            return request.fail(readCache.isPinned(path) ? EPERM : ENODATA)
        }
        do {
            try readCache.unpin(path)
            request.fail(0)
        } catch {
            request.fail(error)
        }
    }

    /// Pins `path`: refused with `ENOSPC` when the pins would need more than the cache's limit;
    /// the contents are fetched in the background.
    func pin(_ path: String, inode: UInt64) async throws {
        guard let item = table.withLock({ $0.node(inode)?.item }) else { throw POSIXError(.ENOENT) }
        var bytes: Int64 = 0
        if item.isDirectory {
            for try await child in provider.walk(path: path) where child.type == .file {
                bytes = bytes.saturatingAdding(max(0, child.size ?? 0))
            }
        } else {
            bytes = max(0, item.size ?? 0)
        }
        do {
            try readCache.pin(path, needing: bytes)
        } catch let error as FileProviderCache.CacheError {
            logger.warning("not pinned", metadata: ["path": .string(path), "reason": .string(error.description)])
            throw POSIXError(.ENOSPC)
        }
        materializer.schedule(path, fileSystem: self)
    }

    /// Drops the cached contents of `path` (and under it): `EBUSY` for a pinned item, or a
    /// file with changes not uploaded yet. Contents an open file uses stay until it is closed.
    func evict(_ path: String, inode: UInt64) throws {
        if let file = dirty.withLock({ $0[inode] }), file.isModified || file.snapshot.handles > 0 { throw POSIXError(.EBUSY) }
        do {
            try readCache.evict(path)
        } catch is FileProviderCache.CacheError {
            throw POSIXError(.EBUSY)
        }
        // The kernel's pages of it go too: a read asks the remote again, as the state says.
        openedPins.withLock { $0[inode] = nil }
        session.withLock { $0 }?.invalidateInode(inode)
    }

    /// What `gateway mount-status` shows.
    func statusReport() async -> MountStatusReport {
        let usage = readCache.usage
        let files = dirty.withLock { Array($0.values) }.filter(\.isModified)
        let pending = table.withLock { table in
            files.compactMap { file in
                table.path(of: file.inode).map { path in
                    let snapshot = file.snapshot
                    return MountStatusReport.Upload(path: path, size: snapshot.size, uploading: snapshot.uploading,
                                                    sent: snapshot.progress.map { min($0.snapshot.completedBytes, snapshot.size) } ?? 0)
                }
            }
        }.sorted { $0.path < $1.path }
        let conflicts = conflicted.withLock { Array($0) }.compactMap { inode in table.withLock { $0.path(of: inode) } }.sorted()
        let progress = materializer.progress
        var reachable = connectivity.isOnline
        if reachable, !(await provider.isReachable()) {
            reachable = false
            connectivity.noteFailure(POSIXError(.EHOSTUNREACH), fileSystem: self)
        }
        return MountStatusReport(
            remote: provider.name, root: table.withLock { $0.rootPath }, cacheDirectory: (cacheFolder as NSString).deletingLastPathComponent,
            cacheUsed: usage.total, cacheLimit: usage.limit, pinnedBytes: usage.pinned, pinnedExpected: usage.pinnedExpected,
            pins: readCache.pins, pendingUploads: pending.count, uploads: Array(pending.prefix(MountStatusReport.listLimit)),
            conflicts: Array(conflicts.prefix(MountStatusReport.listLimit)), reachable: reachable, followingChanges: followingChanges,
            fetchQueued: progress.queued, fetching: progress.current, fetched: progress.fetched,
            fetchFailures: progress.failures.sorted { $0.key < $1.key }.prefix(MountStatusReport.listLimit)
                .map { MountStatusReport.Failure(path: $0.key, error: $0.value) })
    }
}

/// A mount's status (`gateway mount-status`, the root's `user.gateway.status` attribute).
public struct MountStatusReport: Codable, Sendable, Equatable {
    /// Lists are cut to this many entries (an attribute's value holds at most 64 KiB).
    public static let listLimit = 100

    /// A file written through the mount, not yet on the remote.
    public struct Upload: Codable, Sendable, Equatable {
        public var path: String
        public var size: Int64
        /// Being sent now (else waiting for its write-back delay, or for the remote).
        public var uploading: Bool
        /// Bytes of it sent so far, while it is being sent (0 otherwise).
        public var sent: Int64
    }

    /// A pinned item that could not be fetched, and why.
    public struct Failure: Codable, Sendable, Equatable {
        public var path: String
        public var error: String
    }

    /// The remote's name and the folder of it that is mounted.
    public var remote: String
    public var root: String
    /// Where written files and fetched contents are kept.
    public var cacheDirectory: String
    /// Bytes of fetched contents kept, and the hard limit (`--cache-max-size`).
    public var cacheUsed: Int64
    public var cacheLimit: Int64
    /// Bytes of pinned items kept, and what the pins were expected to need.
    public var pinnedBytes: Int64
    public var pinnedExpected: Int64
    /// The pinned paths (each with everything under it).
    public var pins: [String]
    /// Files written through the mount and not on the remote yet (all of them), and the first
    /// ``listLimit`` of them.
    public var pendingUploads: Int
    public var uploads: [Upload]
    /// Conflict copies the mount made (the remote's version kept the name).
    public var conflicts: [String]
    /// Whether the remote answered just now.
    public var reachable: Bool
    /// Whether remote changes are followed (a monitor).
    public var followingChanges: Bool
    /// Pinned items waiting to be fetched, the one being fetched, how many were, and failures.
    public var fetchQueued: Int
    public var fetching: String?
    public var fetched: Int
    public var fetchFailures: [Failure]

    enum CodingKeys: String, CodingKey {
        case remote, root, pins, uploads, conflicts, reachable, fetching, fetched
        case cacheDirectory = "cache_dir"
        case cacheUsed = "cache_used"
        case cacheLimit = "cache_limit"
        case pinnedBytes = "pinned_bytes"
        case pinnedExpected = "pinned_expected"
        case pendingUploads = "pending_uploads"
        case followingChanges = "following_changes"
        case fetchQueued = "fetch_queued"
        case fetchFailures = "fetch_failures"
    }
}
