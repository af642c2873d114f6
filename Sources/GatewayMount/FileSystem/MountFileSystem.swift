import CFuse
import Foundation
import GatewayCore
import GatewayState
import Logging
import Synchronization

/// The file system a mount shows: the kernel's requests (``FUSEOperations``) answered from a
/// provider's public protocols, so it works over any backend.
///
/// Items are placeholders: what listings and lookups said of them (size, times, type, version
/// tag), with no content fetched until a program reads (``OpenFile``). Each request is answered
/// from its own task; the kernel goes on sending others meanwhile.
final class MountFileSystem: Sendable {
    let provider: any FileProviderReadWrite
    let options: MountOptions
    let logger: Logger
    let table: Mutex<InodeTable>
    let handles = Mutex(Handles())
    /// Files with contents in the cache folder (written through the mount), by inode.
    let dirty = Mutex<[UInt64: DirtyFile]>([:])
    /// Where dirty files keep their contents.
    let cacheFolder: String
    /// Fetched contents of remote files, by item version.
    let readCache: FileProviderCache
    let uploader: Uploader
    /// The uploads owed, in the state store (replayed by the next mount after a crash).
    let queue: UploadQueue?
    /// The folder changes made offline, in the state store (applied when the remote is back).
    let journal: ChangeJournal?
    /// The last listing of each folder listed in full (shown offline).
    let listings: FolderListings?
    /// Where the kept listings are written, in order, away from the kernel's requests.
    let listingWrites = DispatchQueue(label: "gateway-mount-listings")
    /// Folders the mount made, whose names it all knows (only while remote changes are followed).
    let known = Mutex(KnownFolders())
    /// The version each file was last opened for reading at (the kernel's pages are of it).
    let openedPins = Mutex<[UInt64: ReadPin]>([:])
    /// Whether the remote's changes are followed (a monitor pushes them), so what the mount made
    /// stays known.
    let followingChanges: Bool
    /// The kernel session, once mounted (for notifications the file system sends itself).
    let session = Mutex<FUSESession?>(nil)
    /// How many times the mount itself changed each inode (``ReadPin/sequence``).
    let ownChanges = Mutex<[UInt64: UInt64]>([:])
    /// Conflict copies the mount made (``keepBoth(_:path:schedule:)``): their state is `conflict`.
    let conflicted = Mutex<Set<UInt64>>([])
    /// Fetches pinned items in the background.
    let materializer: Materializer
    /// How many remote changes the monitor has applied (a full listing tells a folder's names
    /// only when none came meanwhile).
    let remoteChanges = Mutex<UInt64>(0)
    /// Whether the remote answers (offline: what needs it fails at once, uploads wait).
    let connectivity: Connectivity

    /// What an open file handle reads from (and writes to).
    enum OpenHandle: Sendable {
        /// The remote, at the version the file was opened with.
        case remote(OpenFile)
        /// The cache file of a file written through the mount.
        case dirty(DirtyFile)
    }

    struct Handles {
        var next: UInt64 = 1
        var files: [UInt64: OpenHandle] = [:]
        var folders: [UInt64: FolderReader] = [:]

        mutating func add(_ handle: OpenHandle) -> UInt64 {
            let number = next
            next += 1
            files[number] = handle
            return number
        }
    }

    init(provider: any FileProviderReadWrite, rootPath: String, rootItem: FileObject, options: MountOptions, cacheFolder: String,
         readCache: FileProviderCache, queue: UploadQueue?, journal: ChangeJournal? = nil, listings: FolderListings? = nil,
         followingChanges: Bool = false, logger: Logger) {
        self.journal = journal
        self.listings = listings
        self.readCache = readCache
        self.followingChanges = followingChanges
        self.provider = provider
        self.options = options
        self.logger = logger
        self.cacheFolder = cacheFolder
        self.queue = queue
        self.table = Mutex(InodeTable(rootPath: rootPath, rootItem: rootItem))
        self.uploader = Uploader(delay: options.writeBack, logger: logger)
        self.materializer = Materializer(logger: logger)
        self.connectivity = Connectivity(logger: logger)
    }

    /// The remote answers again after an outage: pinned items are checked, waiting uploads go
    /// (``Uploader`` waits on ``connectivity``).
    func cameOnline() {
        for pinned in readCache.pins { materializer.schedule(pinned, fileSystem: self) }
    }

    /// Seconds the kernel keeps names and attributes.
    var timeout: Double { options.attributeTimeout ?? 1 }

    /// The provider's operations (folders, removals, renames), where it has them.
    var operations: (any FileProviderOperations)? { provider as? any FileProviderOperations }

    /// Runs `body` in a task and answers `request` with its error if it throws.
    func answer(_ request: FUSERequest, _ body: @escaping @Sendable () async throws -> Void) {
        Task {
            do {
                try await body()
            } catch {
                logger.debug("request failed", metadata: ["error": .string("\(error)")])
                connectivity.noteFailure(error, fileSystem: self)
                request.fail(error)
            }
        }
    }

    // MARK: Names and attributes

    func lookup(_ request: FUSERequest, parent: UInt64, name: String) {
        answer(request) { [self] in
            guard FolderReader.isAcceptableName(name), let path = table.withLock({ $0.path(of: name, in: parent) }) else {
                throw POSIXError(.ENOENT)
            }
            // In a folder the mount made, a name it does not know is not there.
            if known.withLock({ $0.isAbsent(name, in: parent) }) {
                request.negativeEntry(timeout: timeout)
                return
            }
            // A file written through the mount answers from its cache (it may not be on the remote yet).
            if let known = table.withLock({ $0.inode(of: name, in: parent) }), dirty.withLock({ $0[known] }) != nil {
                let inode = table.withLock { table -> UInt64 in
                    let item = table.node(known)!.item
                    return table.remember(item, as: name, in: parent)
                }
                request.entry(inode: inode, attributes: attributes(of: inode), timeout: timeout)
                return
            }
            // Offline: a name the mount knows is answered from what it knows (its inodes, then
            // the folder's kept listing); others can't be.
            if !connectivity.isOnline {
                if let known = table.withLock({ $0.inode(of: name, in: parent) }) {
                    let inode = table.withLock { table -> UInt64 in table.remember(table.node(known)!.item, as: name, in: parent) }
                    request.entry(inode: inode, attributes: attributes(of: inode), timeout: timeout)
                    return
                }
                let folder = (path as NSString).deletingLastPathComponent
                guard let kept = try listings?.item(named: name, in: folder.isEmpty ? "/" : folder) else { throw POSIXError(.EHOSTUNREACH) }
                guard let item = kept else {
                    request.negativeEntry(timeout: 1)
                    return
                }
                let inode = table.withLock { $0.remember(item, as: name, in: parent) }
                request.entry(inode: inode, attributes: attributes(of: item, inode: inode), timeout: timeout)
                return
            }
            guard let item = try await provider.itemIfPresent(path: path) else {
                request.negativeEntry(timeout: timeout)
                return
            }
            let inode = table.withLock { $0.remember(item, as: name, in: parent) }
            request.entry(inode: inode, attributes: attributes(of: item, inode: inode), timeout: timeout)
        }
    }

    func forget(_ inode: UInt64, count: UInt64) {
        let gone = table.withLock { table in
            table.forget(inode, count: count)
            return table.node(inode) == nil
        }
        if gone {
            known.withLock { $0.forget(inode) }
            openedPins.withLock { $0[inode] = nil }
            conflicted.withLock { _ = $0.remove(inode) }
        }
    }

    func getattr(_ request: FUSERequest, inode: UInt64) {
        guard table.withLock({ $0.node(inode) }) != nil else { return request.fail(ENOENT) }
        request.attributes(attributes(of: inode), timeout: timeout)
    }

    /// What a read of `inode` is pinned to now (``OpenFile``).
    func pin(of inode: UInt64) -> ReadPin? {
        guard let item = table.withLock({ $0.node(inode)?.item }), let path = table.withLock({ $0.path(of: inode) }) else { return nil }
        return ReadPin(path: path, version: item.versionTag, size: item.size, sequence: ownChanges.withLock { $0[inode] ?? 0 })
    }

    /// The mount itself changed `inode` (its contents or time on the remote): open handles move
    /// their pin to what the table now holds.
    func noteOwnChange(_ inode: UInt64) {
        ownChanges.withLock { $0[inode, default: 0] &+= 1 }
    }

    /// The `stat` of an inode: what the remote said, with a dirty file's own size and time.
    func attributes(of inode: UInt64) -> stat {
        var item = table.withLock { $0.node(inode)?.item } ?? FileObject(path: "/", type: .file)
        if let file = dirty.withLock({ $0[inode] }) {
            let state = file.snapshot
            item.size = state.size
            if let date = state.modificationDate ?? state.lastWrite {
                item.modificationDate = date
                item.sourceStamp = nil
            }
        }
        return attributes(of: item, inode: inode)
    }

    /// The `stat` the kernel is given for `item`: its type, size and times, owned by the mount's
    /// user, with the permission bits of a read-only or writable mount less the `umask`.
    func attributes(of item: FileObject, inode: UInt64) -> stat {
        var result = stat()
        result.st_ino = __ino_t(inode)
        let permissions: mode_t = (item.isDirectory ? 0o777 : 0o666) & ~options.umask & (options.readOnly ? 0o555 : 0o777)
        result.st_mode = item.isDirectory ? S_IFDIR | permissions : item.isSymbolicLink ? S_IFLNK | 0o777 : S_IFREG | permissions
        result.st_nlink = item.isDirectory ? 2 : 1
        result.st_uid = options.uid
        result.st_gid = options.gid
        let size = item.isDirectory ? 0 : max(0, item.sizeShown ?? 0)
        result.st_size = Int(size)
        result.st_blksize = 128 << 10
        result.st_blocks = Int((size + 511) / 512)
        // A file's source stamp holds the time it was given (a remote that can't set times, plain
        // WebDAV, keeps it there): programs that set times (rsync -a, cp -p, make) see them kept.
        let time = Self.fileTime(item.sourceStamp?.modificationDate ?? item.modificationDate ?? Date(timeIntervalSince1970: 0))
        result.st_mtim = time
        result.st_ctim = time
        result.st_atim = time
        return result
    }

    /// A date as the kernel's time (a date beyond what it can hold is the epoch).
    static func fileTime(_ date: Date) -> timespec {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, abs(seconds) < 1e15 else { return timespec() }
        let nanoseconds = Int(((date.timeIntervalSince1970 - seconds) * 1e9).rounded(.down))
        return timespec(tv_sec: Int(seconds), tv_nsec: min(max(nanoseconds, 0), 999_999_999))
    }

    // MARK: Files

    func open(_ request: FUSERequest, inode: UInt64, flags: Int32) {
        let writing = flags & O_ACCMODE != O_RDONLY || flags & O_TRUNC != 0
        if options.readOnly, writing { return request.fail(EROFS) }
        guard let node = table.withLock({ $0.node(inode) }), let pin = pin(of: inode) else { return request.fail(ENOENT) }
        guard !node.item.isDirectory else { return request.fail(EISDIR) }
        if dirty.withLock({ $0[inode] }) != nil || writing {
            answer(request) { [self] in
                let file = try await dirtyFile(inode, truncating: flags & O_TRUNC != 0)
                if flags & O_TRUNC != 0, file.size != 0 { try file.truncate(to: 0) }
                file.opened()
                let handle = handles.withLock { $0.add(.dirty(file)) }
                request.open(handle: handle, keepCache: false)
            }
            return
        }
        let file = OpenFile(provider: provider, inode: inode, cache: readCache, pin: pin, connectivity: connectivity) { [weak self] in
            self?.pin(of: inode)
        }
        let handle = handles.withLock { $0.add(.remote(file)) }
        // The kernel keeps the pages it has of this file when they are of the version it opens
        // now (a re-read asks nothing); any other version, or none known, starts afresh. A remote
        // change seen later drops them too (Coherence: notify_inval_inode).
        let keep = pin.version != nil && openedPins.withLock { opened in
            defer { opened[inode] = pin }
            return opened[inode] == pin
        }
        request.open(handle: handle, keepCache: keep)
    }

    func read(_ request: FUSERequest, handle: UInt64, offset: Int64, size: Int) {
        switch handles.withLock({ $0.files[handle] }) {
        case .remote(let file):
            // Written through another handle since: the cache file holds the newest bytes.
            if let written = dirty.withLock({ $0[file.inode] }) {
                do {
                    request.buffer(try written.read(at: offset, length: size))
                } catch {
                    request.fail(error)
                }
                return
            }
            answer(request) { request.buffers(try await file.readParts(offset: offset, length: size)) }
        case .dirty(let file):
            do {
                request.buffer(try file.read(at: offset, length: size))
            } catch {
                request.fail(error)
            }
        case nil:
            request.fail(EBADF)
        }
    }

    func release(_ request: FUSERequest, handle: UInt64) {
        switch handles.withLock({ $0.files.removeValue(forKey: handle) }) {
        case .remote(let file):
            Task {
                await file.close()
                request.fail(0)
            }
        case .dirty(let file):
            // The last close starts the write-back clock.
            if file.closed() == 0 { uploader.schedule(file, fileSystem: self) }
            request.fail(0)
        case nil:
            request.fail(0)
        }
    }

    // MARK: Folders

    func opendir(_ request: FUSERequest, inode: UInt64) {
        guard let node = table.withLock({ $0.node(inode) }), let path = table.withLock({ $0.path(of: inode) }) else {
            return request.fail(ENOENT)
        }
        guard node.item.isDirectory else { return request.fail(ENOTDIR) }
        let reader = FolderReader(provider: provider, path: path, inode: inode)
        let handle = handles.withLock { handles in
            let handle = handles.next
            handles.next += 1
            handles.folders[handle] = reader
            return handle
        }
        // While remote changes are followed (each one invalidates the folder in the kernel, and
        // the kernel drops its copy on changes made through the mount), the kernel may keep the
        // listing: an `ls` again asks nothing.
        request.open(handle: handle, keepCache: false, cacheListing: followingChanges)
    }

    /// `readdirplus` (`plus`: entries with attributes, each one more lookup of its inode) or
    /// `readdir` (names and types only; the kernel makes no inode of them).
    func readdir(_ request: FUSERequest, handle: UInt64, offset: Int64, size: Int, plus: Bool) {
        guard let reader = handles.withLock({ $0.folders[handle] }) else { return request.fail(EBADF) }
        answer(request) { [self] in
            let buffer = try await reader.fill(request: request, offset: offset, size: size, plus: plus, fileSystem: self)
            request.buffer(buffer)
        }
    }

    func releasedir(_ request: FUSERequest, handle: UInt64) {
        _ = handles.withLock { $0.folders.removeValue(forKey: handle) }
        request.fail(0)
    }

    // MARK: The volume

    func statfs(_ request: FUSERequest) {
        answer(request) { [self] in
            let root = table.withLock { $0.rootPath }
            let volume = connectivity.isOnline ? try? await provider.storageProperties(path: root) : nil
            var info = statvfs()
            let block: UInt = 4096
            info.f_bsize = block
            info.f_frsize = block
            info.f_namemax = 255
            let total = volume?.totalCapacity ?? volume.flatMap { v in v.usedCapacity.flatMap { used in v.availableCapacity.map { used &+ $0 } } }
            if let total, total > 0 { info.f_blocks = fsblkcnt_t(total / Int64(block)) }
            if let available = volume?.availableCapacity, available > 0 {
                info.f_bfree = fsblkcnt_t(available / Int64(block))
                info.f_bavail = info.f_bfree
            }
            request.statfs(info)
        }
    }
}
