import CFuse
import Foundation
import GatewayCore
import GatewayState

/// Changes made through the mount: file contents go to a cache file first and reach the remote
/// with the provider's atomic write after the last close (``Uploader``); names (folders,
/// removals, renames) change on the remote at once, through ``FileProviderOperations``.
extension MountFileSystem {
    /// The dirty file of `inode`, made on first use: empty when `truncating`, else filled with the
    /// remote's contents at the version the inode was listed with (one streamed read).
    func dirtyFile(_ inode: UInt64, truncating: Bool) async throws -> DirtyFile {
        if let existing = dirty.withLock({ $0[inode] }) { return existing }
        guard let node = table.withLock({ $0.node(inode) }), let path = table.withLock({ $0.path(of: inode) }) else {
            throw POSIXError(.ENOENT)
        }
        let cachePath = cacheFolder + "/" + UUID().uuidString
        var size: Int64 = 0
        if truncating || node.item.size == 0 {
            guard FileManager.default.createFile(atPath: cachePath, contents: nil) else { throw POSIXError(.EIO) }
        } else {
            let stream = try await provider.readStream(path: path, options: ReadOptions(ifVersion: node.item.versionTag))
            try await LocalFileSink.write(stream, to: URL(fileURLWithPath: cachePath), overwrite: true, progress: nil)
            size = Int64((try FileManager.default.attributesOfItem(atPath: cachePath)[.size] as? Int) ?? 0)
        }
        let file = try DirtyFile(inode: inode, cachePath: cachePath, size: size, modified: truncating && (node.item.size ?? 0) > 0,
                                 existsRemotely: true)
        return dirty.withLock { dirty in
            if let raced = dirty[inode] { return raced }
            dirty[inode] = file
            return file
        }
    }

    func create(_ request: FUSERequest, parent: UInt64, name: String, flags: Int32) {
        guard !options.readOnly else { return request.fail(EROFS) }
        guard let path = table.withLock({ $0.path(of: name, in: parent) }) else { return request.fail(ENOENT) }
        let cachePath = cacheFolder + "/" + UUID().uuidString
        guard FileManager.default.createFile(atPath: cachePath, contents: nil) else { return request.fail(EIO) }
        do {
            let item = FileObject(path: path, type: .file, size: 0, modificationDate: Date())
            let inode = table.withLock { $0.remember(item, as: name, in: parent) }
            let file = try DirtyFile(inode: inode, cachePath: cachePath, size: 0, modified: true, existsRemotely: false)
            dirty.withLock { $0[inode] = file }
            file.opened()
            let handle = handles.withLock { $0.add(.dirty(file)) }
            var entry = fuse_entry_param()
            entry.ino = fuse_ino_t(inode)
            entry.attr = attributes(of: inode)
            entry.attr_timeout = timeout
            entry.entry_timeout = timeout
            var info = fuse_file_info()
            info.fh = handle
            _ = fuse_reply_create(request.raw, &entry, &info)
        } catch {
            try? FileManager.default.removeItem(atPath: cachePath)
            request.fail(error)
        }
    }

    func write(_ request: FUSERequest, handle: UInt64, bytes: UnsafeRawBufferPointer, offset: Int64) {
        guard case .dirty(let file) = handles.withLock({ $0.files[handle] }) else { return request.fail(EBADF) }
        do {
            _ = fuse_reply_write(request.raw, try file.write(bytes, at: offset))
        } catch {
            request.fail(error)
        }
    }

    /// `fsync`: returns once the file's contents are on the remote.
    func fsync(_ request: FUSERequest, handle: UInt64) {
        guard case .dirty(let file) = handles.withLock({ $0.files[handle] }) else { return request.fail(0) }
        answer(request) { [self] in
            try await uploader.uploadNow(file, fileSystem: self)
            request.fail(0)
        }
    }

    func setattr(_ request: FUSERequest, inode: UInt64, attributes wanted: stat, fields: Int32) {
        answer(request) { [self] in
            guard table.withLock({ $0.node(inode) }) != nil else { throw POSIXError(.ENOENT) }
            if fields & FUSE_SET_ATTR_SIZE != 0 {
                guard !options.readOnly else { throw POSIXError(.EROFS) }
                let size = Int64(wanted.st_size)
                let file = try await dirtyFile(inode, truncating: size == 0)
                try file.truncate(to: size)
                if file.snapshot.handles == 0 { uploader.schedule(file, fileSystem: self) }
            }
            if fields & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW) != 0 {
                let date = fields & FUSE_SET_ATTR_MTIME_NOW != 0
                    ? Date() : Date(timeIntervalSince1970: Double(wanted.st_mtim.tv_sec) + Double(wanted.st_mtim.tv_nsec) / 1e9)
                try await setModificationDate(date, inode: inode)
            }
            // Permission bits and owners are the mount's (--umask, --uid, --gid): a chmod or chown
            // is accepted and not kept, as on other file systems without them (vfat, most remotes).
            request.attributes(attributes(of: inode), timeout: timeout)
        }
    }

    /// A new modification time: set on the remote where it can keep times (Local, FTP with MFMT,
    /// Nextcloud); elsewhere (plain WebDAV) given to the file's next upload, which records it in
    /// the file's source stamp, the time the mount shows. A file not written through the mount is
    /// uploaded again for it (a `touch` of a large file on plain WebDAV costs its upload).
    private func setModificationDate(_ date: Date, inode: UInt64) async throws {
        guard let node = table.withLock({ $0.node(inode) }), let path = table.withLock({ $0.path(of: inode) }) else {
            throw POSIXError(.ENOENT)
        }
        if node.item.isDirectory {
            // Folders carry no stamp: kept where the remote sets times, else the remote's own.
            if let operations, provider.capabilities.features.contains(.setModificationDate) {
                try await operations.setModificationDate(date, path: path)
            }
            return
        }
        guard !options.readOnly else { throw POSIXError(.EROFS) }
        if dirty.withLock({ $0[inode] }) == nil, let operations, provider.capabilities.features.contains(.setModificationDate) {
            try await operations.setModificationDate(date, path: path)
            let item = try await provider.attributesOfItem(path: path)
            table.withLock { $0.update(inode, item: item) }
            noteOwnChange(inode)
            return
        }
        let file = try await dirtyFile(inode, truncating: false)
        file.setModificationDate(date)
        if file.snapshot.handles == 0 { uploader.schedule(file, fileSystem: self) }
    }

    func mkdir(_ request: FUSERequest, parent: UInt64, name: String) {
        answer(request) { [self] in
            guard !options.readOnly, let operations else { throw POSIXError(.EROFS) }
            guard let path = table.withLock({ $0.path(of: name, in: parent) }) else { throw POSIXError(.ENOENT) }
            try await operations.createFolder(path: path, withIntermediateDirectories: false)
            let item = try await provider.attributesOfItem(path: path)
            let inode = table.withLock { $0.remember(item, as: name, in: parent) }
            request.entry(inode: inode, attributes: attributes(of: inode), timeout: timeout)
        }
    }

    func unlink(_ request: FUSERequest, parent: UInt64, name: String) {
        answer(request) { [self] in
            guard !options.readOnly, let operations else { throw POSIXError(.EROFS) }
            guard let path = table.withLock({ $0.path(of: name, in: parent) }) else { throw POSIXError(.ENOENT) }
            let inode = table.withLock { $0.inode(of: name, in: parent) }
            let file = inode.flatMap { inode in dirty.withLock { $0[inode] } }
            if let file {
                try await file.withoutUpload {
                    file.markRemoved()
                    if file.snapshot.existsRemotely { try await operations.removeItem(path: path, recursive: false) }
                }
                dequeue(file)
                forgetDirty(file)
            } else {
                if let inode { try await keepOpenContents(of: inode) }
                try await operations.removeItem(path: path, recursive: false)
            }
            if let inode { table.withLock { $0.unlink(inode) } }
            request.fail(0)
        }
    }

    func rmdir(_ request: FUSERequest, parent: UInt64, name: String) {
        answer(request) { [self] in
            guard !options.readOnly, let operations else { throw POSIXError(.EROFS) }
            guard let path = table.withLock({ $0.path(of: name, in: parent) }) else { throw POSIXError(.ENOENT) }
            let item = try await provider.attributesOfItem(path: path)
            guard item.isDirectory else { throw POSIXError(.ENOTDIR) }
            try await operations.removeItem(path: path, recursive: false)
            if let inode = table.withLock({ $0.inode(of: name, in: parent) }) { table.withLock { $0.unlink(inode) } }
            request.fail(0)
        }
    }

    func rename(_ request: FUSERequest, parent: UInt64, name: String, newParent: UInt64, newName: String, flags: UInt32) {
        answer(request) { [self] in
            guard !options.readOnly, let operations else { throw POSIXError(.EROFS) }
            // RENAME_EXCHANGE (2) swaps two names: no backend can do that in one step.
            guard flags & 2 == 0 else { throw POSIXError(.EINVAL) }
            let noReplace = flags & 1 != 0
            guard let source = table.withLock({ $0.path(of: name, in: parent) }),
                  let target = table.withLock({ $0.path(of: newName, in: newParent) }) else { throw POSIXError(.ENOENT) }
            let inode = table.withLock { $0.inode(of: name, in: parent) }
            let replaced = table.withLock { $0.inode(of: newName, in: newParent) }
            let file = inode.flatMap { inode in dirty.withLock { $0[inode] } }
            let replacedFile = replaced.flatMap { replaced in dirty.withLock { $0[replaced] } }
            let move = { [self] in
                if let file, !file.snapshot.existsRemotely {
                    // Only here so far: the upload goes to the new name. What the name held on the
                    // remote is replaced by that upload (or removed now, with nothing to replace it).
                    if try await provider.itemIfPresent(path: target) != nil {
                        if noReplace { throw POSIXError(.EEXIST) }
                        if replacedFile == nil { try await operations.removeItem(path: target, recursive: true) }
                    }
                } else {
                    try await operations.moveItem(path: source, to: target, overwrite: !noReplace)
                }
                if let replacedFile {
                    replacedFile.markRemoved()
                    dequeue(replacedFile)
                    forgetDirty(replacedFile)
                }
                if let inode { table.withLock { $0.move(inode, to: newName, in: newParent) } }
                do {
                    try queue?.move(from: source, to: target)
                } catch {
                    logger.warning("upload queue not updated for a rename", metadata: ["error": .string("\(error)")])
                }
            }
            if let replaced, replacedFile == nil { try await keepOpenContents(of: replaced) }
            if let file { try await file.withoutUpload(move) } else { try await move() }
            if let file, file.snapshot.handles == 0, file.isModified { uploader.schedule(file, fileSystem: self) }
            request.fail(0)
        }
    }

    /// The remote file of `inode` is about to go: handles that have it open fetch what they have
    /// not read yet into the read cache, so they go on reading it (POSIX keeps an unlinked file's
    /// contents for those who have it open).
    func keepOpenContents(of inode: UInt64) async throws {
        let open = handles.withLock { handles in
            handles.files.values.compactMap { handle -> OpenFile? in
                if case .remote(let file) = handle, file.inode == inode { return file }
                return nil
            }
        }
        for file in open { try await file.fetchAll() }
    }

    /// Drops a dirty file that no handle holds and nothing needs to upload.
    func forgetDirty(_ file: DirtyFile) {
        let state = file.snapshot
        guard state.handles == 0, state.removed || state.generation == state.uploaded else { return }
        dirty.withLock { dirty in
            if dirty[file.inode] === file { dirty[file.inode] = nil }
        }
    }

    /// Uploads one dirty file to its current name; updates what the mount knows of it.
    func upload(_ file: DirtyFile) async throws {
        let inode = file.inode
        _ = try await file.upload(to: { [self] in table.withLock { $0.path(of: inode) } }, provider: provider) { [self] stored in
            table.withLock { $0.update(inode, item: stored) }
            noteOwnChange(inode)
        }
        if !file.isModified { dequeue(file) }
        forgetDirty(file)
    }

    /// Records that `file` is owed to the remote (its last writer closed it).
    func enqueue(_ file: DirtyFile) {
        guard let queue, let path = table.withLock({ $0.path(of: file.inode) }) else { return }
        let entry = UploadQueue.Entry(cacheFile: (file.cachePath as NSString).lastPathComponent, remote: provider.name, path: path,
                                      modificationDate: file.snapshot.modificationDate)
        do {
            try queue.record(entry)
        } catch {
            logger.warning("upload not recorded in the state store", metadata: ["path": .string(path), "error": .string("\(error)")])
        }
    }

    /// `file` is no longer owed (uploaded, or removed).
    func dequeue(_ file: DirtyFile) {
        do {
            try queue?.remove(cacheFile: (file.cachePath as NSString).lastPathComponent)
        } catch {
            logger.warning("upload queue not updated", metadata: ["error": .string("\(error)")])
        }
    }
}
