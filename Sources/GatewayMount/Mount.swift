public import Foundation
public import GatewayCore
import GatewayState
public import Logging

/// How a mount behaves.
public struct MountOptions: Sendable {
    /// Whether programs may change anything through the mount (`EROFS` when they try).
    public var readOnly = false
    /// How long after a file's last close its upload starts (a program that reopens it meanwhile,
    /// as editors and build tools do, makes one upload of the end result).
    public var writeBack = Duration.seconds(2)
    /// Seconds the kernel keeps a name and its attributes before asking again; `nil` chooses:
    /// 60 where the remote's changes are followed (``followsChanges``, a monitor), else 1.
    public var attributeTimeout: Double?
    /// Whether remote changes are pushed into the kernel as they are seen (where the provider
    /// has a change monitor).
    public var followsChanges = true
    /// Time between two polling rounds of the change monitor (WebDAV, FTP; Local is told by inotify).
    public var pollInterval = Duration.seconds(10)
    /// The owner every item shows (the mounting user by default).
    public var uid: uid_t = getuid()
    /// The group every item shows (the mounting user's by default).
    public var gid: gid_t = getgid()
    /// Permission bits taken away from every item (`0o022`: others and the group cannot write).
    public var umask: mode_t = 0o022
    /// Lets other users than the one who mounted use the mount (FUSE's `allow_other`; for a user
    /// other than root, `user_allow_other` in `/etc/fuse.conf`).
    public var allowOther = false
    /// More FUSE options (`-o`), passed through.
    public var fuseOptions: [String] = []
    /// Told what the mount does that its user may want to see: uploads, failures, conflicts
    /// (called from any thread; keep it short).
    public var events: (@Sendable (MountEvent) -> Void)?
    /// The most bytes of fetched file contents the cache folder keeps (1 GiB), a hard limit: room
    /// is made before bytes are kept, least recently used first, never from pinned items or
    /// files open now; what still doesn't fit is read without being kept. Pinning more than
    /// this is refused (`ENOSPC`).
    public var readCacheLimit: Int64 = 1 << 30
    /// Fetched contents nobody read for this long are dropped (pinned ones stay); `nil`: kept
    /// until room is needed.
    public var cacheMaxAge: Duration?
    /// With a recorder (`gateway mount --trash`), what programs remove or replace through the mount
    /// goes to the remote's trash first, and every change (a file written or made, a folder made,
    /// a removal, a rename) is recorded, so `gateway undo` reverts what they did. The provider
    /// must be ``FileProviderUndoable`` with a trash (``Mount`` refuses it otherwise). `nil`: a
    /// removal is final, as on a local file system.
    public var undoRecorder: (any UndoRecorder)?

    /// The defaults: writable, uploads 2 s after the last close, one-second attribute cache, the
    /// mounting user's items.
    public init() {}
}

/// Something a mount did that its user may want to see (``MountOptions/events``).
public enum MountEvent: Sendable, Equatable {
    /// A file written through the mount is on the remote now, `size` bytes.
    case uploaded(path: String, size: Int64)
    /// An upload failed: tried again later (`willRetry`), or left in the cache folder for the
    /// next mount with it.
    case uploadFailed(path: String, error: String, willRetry: Bool)
    /// Changed on the remote and through the mount: the remote's version kept `path`, the
    /// mount's went to `copy`.
    case conflict(path: String, copy: String)
    /// The remote stopped answering: the mount works from what it has cached, uploads wait.
    case offline(reason: String)
    /// The remote answers again: waiting uploads go.
    case online
    /// The changes made on the remote since the last mount with this cache folder (read from
    /// the anchor it saved) are applied: `changes` of them.
    case caughtUp(changes: Int)
    /// The anchor the last mount saved had expired: the remote was listed afresh, and its
    /// changes are followed from the new anchor; `anchorSaved` when it is saved, so the next
    /// mount catches up from it.
    case listedAfresh(anchorSaved: Bool)
}

/// A remote folder shown as a file system (FUSE): items are placeholders, listed without their
/// contents, and a file's bytes are fetched when a program reads them, at the version the listing
/// showed. Written files wait in the cache folder and are uploaded after their last close; remote
/// changes are pushed into the kernel as the provider's monitor sees them.
///
/// ```swift
/// let mount = try await Mount(provider: provider, path: "/photos", at: "/mnt/photos",
///                             cacheDirectory: "/var/cache/photos-mount")
/// let unsent = await mount.run()   // until unmounted: `unmount()`, `fusermount3 -u`, `umount`
/// ```
public final class Mount: Sendable {
    private let session: FUSESession
    private let fileSystem: MountFileSystem
    private let cache: CacheFolder
    private let coherence: Coherence?
    private let options: MountOptions
    /// The folder the file system is mounted at.
    public let mountpoint: String

    /// Mounts the remote folder `path` of `provider` at `mountpoint`, an existing empty folder,
    /// keeping written files in `cacheDirectory` until they are uploaded (locked: one mount per
    /// cache folder). Returns once the kernel has the mount; ``run()`` serves it.
    ///
    /// Uploads that an earlier mount with this cache folder still owed (it was killed, or its
    /// remote could not be reached) are sent first; `replaying` is told how many before they
    /// start. The list of uploads owed lives in the state store in `stateDirectory`.
    public init(provider: any FileProviderReadWrite, path: String, at mountpoint: String, cacheDirectory: String,
                stateDirectory: URL = StateLocation.directory(), options: MountOptions = MountOptions(),
                logger: Logger = Logger(label: "gateway.mount"), replaying: @Sendable (Int) -> Void = { _ in }) async throws {
        if options.undoRecorder != nil, !options.readOnly, (provider as? any FileProviderUndoable)?.trash == nil {
            throw MountError.refused("\(provider.name) has no trash, so what programs remove in the mount could not be brought back "
                + "(turn the remote's trash on, or mount without --trash)")
        }
        let cache = try CacheFolder.lock(cacheDirectory)
        let queue = try UploadQueue.open(directory: stateDirectory, cacheFolder: cache.path)
        let journal = try ChangeJournal.open(directory: stateDirectory, cacheFolder: cache.path)
        // Folder changes an earlier mount made offline and could not apply (it was stopped or
        // killed first) go before the uploads it owes.
        let undo = options.undoRecorder.flatMap { recorder in
            (provider as? any FileProviderUndoable).map { MountUndo(provider: $0, recorder: recorder) }
        }
        let anchors = try MountAnchors.open(directory: stateDirectory, cacheFolder: cache.path)
        // A remote that does not answer: a mount of it made with this cache folder before starts
        // offline, from what that one kept (its anchor, listings and cached contents); the
        // changes and uploads it owes wait for the remote, as those made from now on.
        var startsOffline = false
        if await ChangeReplay(journal: journal, provider: provider, undo: undo, logger: logger).run() {
            do {
                try await Self.replay(queue, cache: cache, provider: provider, logger: logger, replaying: replaying)
            } catch let error as MountError {
                throw error
            } catch {
                startsOffline = true
            }
        } else {
            startsOffline = true
        }
        let root: FileObject
        do {
            guard !startsOffline else { throw POSIXError(.EHOSTUNREACH) }
            root = try await provider.attributesOfItem(path: path)
        } catch where Connectivity.isUnreachable(error) {
            let normalized = (try? RemotePath.normalize(path)) ?? path
            guard options.followsChanges, (try? anchors.anchor(remote: provider.name, root: normalized)) != nil else {
                throw MountError.refused("\(provider.name) does not answer (\(ErrorMessage.reason(for: error))), and no earlier mount of "
                    + "\(normalized) with the cache folder \(cache.path) left what to start offline from")
            }
            logger.warning("\(provider.name) does not answer: starting offline from what the last mount kept",
                           metadata: ["error": .string("\(error)")])
            startsOffline = true
            root = FileObject(path: normalized, type: .directory)
        }
        guard root.isDirectory else {
            throw CocoaError.posix(ENOTDIR, path: path, remote: provider.name)
        }
        let absolute = URL(fileURLWithPath: mountpoint).standardizedFileURL.path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: absolute, isDirectory: &isFolder), isFolder.boolValue else {
            throw MountError.badMountpoint("the mount point \(absolute) is not a folder (make it first: mkdir -p \(absolute))")
        }
        // Remote changes are followed from this moment on: every change after the anchor is
        // pushed into the kernel, so names and attributes may be kept long.
        var options = options
        var anchor: SyncAnchor?
        let monitor = options.followsChanges ? provider as? any FileProviderMonitor : nil
        var resumed = false
        if let monitor {
            // The anchor the last mount with this cache folder got to: only what changed since is
            // asked for, after mounting (a fresh anchor walks the whole tree first).
            if let saved = try? anchors.anchor(remote: provider.name, root: root.path) {
                anchor = saved
                resumed = true
                logger.debug("catching up from the anchor the last mount saved")
            } else {
                do {
                    let taken = try await monitor.currentAnchor(at: root.path, recursive: true)
                    anchor = taken
                    try? anchors.save(taken, remote: provider.name, root: root.path)
                } catch {
                    logger.warning("remote changes are not followed; names and attributes refresh after the attribute timeout",
                                   metadata: ["error": .string("\(error)")])
                }
            }
        }
        if options.attributeTimeout == nil { options.attributeTimeout = anchor == nil ? 1 : 60 }
        let pins = try PinList.open(directory: stateDirectory, cacheFolder: cache.path)
        let index = try CacheIndex.open(directory: stateDirectory, cacheFolder: cache.path)
        let readCache = try FileProviderCache(folder: cache.path + "/read", limit: options.readCacheLimit, pins: pins, index: index)
        let fileSystem = MountFileSystem(provider: provider, rootPath: root.path, rootItem: root, options: options,
                                         cacheFolder: cache.files, readCache: readCache, queue: queue, journal: journal,
                                         listings: try FolderListings.open(directory: stateDirectory, cacheFolder: cache.path),
                                         followingChanges: anchor != nil, logger: logger)
        var fuseOptions = ["fsname=" + Self.escaped("gateway:\(provider.name)"), "subtype=gateway", "default_permissions"]
        if options.readOnly { fuseOptions.append("ro") }
        if options.allowOther { fuseOptions.append("allow_other") }
        fuseOptions += options.fuseOptions
        session = try FUSESession(fileSystem: fileSystem, mountpoint: absolute, options: fuseOptions)
        fileSystem.session.withLock { [session] in $0 = session }
        if let monitor, let anchor {
            coherence = Coherence(fileSystem: fileSystem, session: session, monitor: monitor, anchor: anchor, resumed: resumed,
                                  anchors: anchors, interval: options.pollInterval, logger: logger)
        } else {
            coherence = nil
        }
        if startsOffline { try fileSystem.startOffline(owed: queue.entries()) }
        self.fileSystem = fileSystem
        self.options = options
        self.cache = cache
        self.mountpoint = absolute
    }

    /// Serves the mount until it is unmounted (``unmount()``, `fusermount3 -u`, `umount`), then
    /// uploads what is still pending (`pending` is told how many files, before it starts). Returns
    /// how many files could not be uploaded (they stay in the cache folder). Cancelling the task
    /// unmounts; the uploads still run to their end (they are owed, and journaled: a process that
    /// stops waiting leaves them to the next mount with this cache folder).
    public func run(pending: @Sendable (Int) -> Void = { _ in }) async -> Int {
        let session = self.session
        Self.widenReadAhead(of: mountpoint, logger: fileSystem.logger)
        let following = coherence.map { coherence in Task { await coherence.run() } }
        // What was pinned in an earlier mount with this cache folder is fetched again.
        for pinned in fileSystem.readCache.pins { fileSystem.materializer.schedule(pinned, fileSystem: fileSystem) }
        let fileSystem = self.fileSystem
        let sweeping = options.cacheMaxAge.map { age in
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: min(max(age / 4, .milliseconds(100)), .seconds(60)))
                    fileSystem.readCache.evictIdle(olderThan: age)
                }
            }
        }
        // What the read cache holds is written to its index now and then (and at the end), so
        // the next mount with this cache folder has it.
        let indexing = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(5))
                fileSystem.persistCache()
            }
        }
        _ = await withTaskCancellationHandler {
            await session.run()
        } onCancel: {
            session.unmount()
        }
        following?.cancel()
        sweeping?.cancel()
        indexing.cancel()
        fileSystem.persistCache()
        fileSystem.session.withLock { $0 = nil }
        let count = fileSystem.uploader.count(fileSystem: fileSystem)
        if count > 0 { pending(count) }
        // Not cancelled with the caller: an unmount by Ctrl-C (a cancelled task) still sends
        // everything written (a second Ctrl-C is the caller's way out; what is left stays owed).
        // Folder changes made offline go first; while they can't, no upload goes either (one
        // could land where a later rename would replace it): all stay owed to the next mount.
        return await Task {
            guard await fileSystem.replayChanges() else {
                fileSystem.logger.warning("the remote does not answer: what was changed offline stays owed to the next mount",
                                          metadata: ["files": .stringConvertible(count)])
                return count
            }
            return await fileSystem.uploader.drain(fileSystem: fileSystem)
        }.value
    }

    /// The kernel reads ahead 128 KiB on a FUSE mount whatever the file system asks (it keeps
    /// the smaller of the two): 1 MiB halves the time of a large sequential read. Only root may
    /// say so (`/sys/class/bdi/MAJOR:MINOR/read_ahead_kb`, as rclone's documentation advises);
    /// for others the kernel's default stays. The device is taken from `/proc/self/mountinfo`,
    /// never from the mount itself (whose requests are not served yet).
    static func widenReadAhead(of mountpoint: String, logger: Logger) {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return }
        // Spaces, tabs, newlines and backslashes in the mount point are octal escapes there.
        let escaped = mountpoint.replacingOccurrences(of: "\\", with: "\\134").replacingOccurrences(of: " ", with: "\\040")
            .replacingOccurrences(of: "\t", with: "\\011").replacingOccurrences(of: "\n", with: "\\012")
        guard let line = table.split(separator: "\n").last(where: { $0.split(separator: " ").dropFirst(4).first.map(String.init) == escaped }),
              let device = line.split(separator: " ").dropFirst(2).first, device.allSatisfy({ $0.isNumber || $0 == ":" }) else { return }
        let path = "/sys/class/bdi/\(device)/read_ahead_kb"
        do {
            try Data("1024\n".utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            logger.debug("read-ahead left at the kernel's default", metadata: ["path": .string(path), "error": .string("\(error)")])
        }
    }

    /// Files written through the mount and not yet on the remote.
    public var pendingUploads: Int { fileSystem.uploader.count(fileSystem: fileSystem) }

    /// The remote paths of the files written through the mount and not yet on the remote (they
    /// are kept in the cache folder, and the next mount with it sends them).
    public var pendingPaths: [String] {
        let files = fileSystem.dirty.withLock { Array($0.values) }.filter(\.isModified)
        return fileSystem.table.withLock { table in files.compactMap { table.path(of: $0.inode) } }.sorted()
    }

    /// The folder written files wait in until they are uploaded.
    public var cacheDirectory: String { cache.path }

    /// Unmounts: nothing new enters the mount; ``run()`` returns once the kernel lets go.
    public func unmount() {
        session.unmount()
    }

    /// Sends the uploads an earlier mount owed, then clears the cache folder of files nothing
    /// owes (a file a program still had open when the mount died: never closed, never owed).
    static func replay(_ queue: UploadQueue, cache: CacheFolder, provider: any FileProviderReadWrite, logger: Logger,
                       replaying: @Sendable (Int) -> Void) async throws {
        let owed = try queue.entries()
        if let foreign = owed.first(where: { $0.remote != provider.name }) {
            throw MountError.refused("the cache folder \(cache.path) holds \(owed.count) upload(s) for the remote \(foreign.remote); "
                + "mount \(foreign.remote) with it first (they are sent then), or give this mount another --cache-dir")
        }
        if !owed.isEmpty { replaying(owed.count) }
        for entry in owed {
            let file = cache.files + "/" + entry.cacheFile
            guard FileManager.default.fileExists(atPath: file) else {
                logger.warning("an upload owed has no cache file; dropped", metadata: ["path": .string(entry.path), "file": .string(file)])
                try queue.remove(cacheFile: entry.cacheFile)
                continue
            }
            do {
                let options = WriteOptions(overwrite: true, modificationDate: entry.modificationDate)
                _ = try await provider.write(path: entry.path, from: try ByteStream.contentsOfFile(at: URL(fileURLWithPath: file)), options: options)
            } catch where Connectivity.isUnreachable(error) {
                throw error
            } catch {
                throw MountError.refused("an upload left by an earlier mount could not be sent (\(entry.path): \(error)); "
                    + "it stays in \(cache.files) and is tried again at the next mount")
            }
            try queue.remove(cacheFile: entry.cacheFile)
            try? FileManager.default.removeItem(atPath: file)
        }
        let kept = Set(try queue.entries().map(\.cacheFile))
        for name in (try? FileManager.default.contentsOfDirectory(atPath: cache.files)) ?? [] where !kept.contains(name) {
            logger.debug("removing a cache file nothing owes", metadata: ["file": .string(name)])
            try? FileManager.default.removeItem(atPath: cache.files + "/" + name)
        }
    }

    /// A value for `-o`, its commas and backslashes escaped (libfuse splits options at commas).
    static func escaped(_ option: String) -> String {
        option.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ",", with: "\\,")
    }
}
