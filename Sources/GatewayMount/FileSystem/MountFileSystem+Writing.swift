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
        } else if let key = pin(of: inode).flatMap(OpenFile.cacheKey), readCache.state(of: key) == .materialized {
            // Every byte of this version is in the read cache: no download (and it works offline).
            let entry = try readCache.acquire(key)
            defer { readCache.release(entry) }
            guard FileManager.default.createFile(atPath: cachePath, contents: nil) else { throw POSIXError(.EIO) }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: cachePath))
            defer { try? handle.close() }
            while size < key.size {
                let chunk = try entry.read(at: size, length: Int(min(4 << 20, key.size - size)))
                guard !chunk.isEmpty else { throw POSIXError(.EIO) }
                try handle.write(contentsOf: chunk)
                size += Int64(chunk.count)
            }
        } else {
            try connectivity.requireOnline()
            let stream = try await provider.readStream(path: path, options: ReadOptions(ifVersion: node.item.versionTag))
            try await LocalFileSink.write(stream, to: URL(fileURLWithPath: cachePath), overwrite: true, progress: nil)
            size = Int64((try FileManager.default.attributesOfItem(atPath: cachePath)[.size] as? Int) ?? 0)
        }
        let file = try DirtyFile(inode: inode, cachePath: cachePath, size: size, modified: truncating && (node.item.size ?? 0) > 0,
                                 existsRemotely: true, base: node.item.versionTag)
        let (kept, isNew) = dirty.withLock { dirty -> (DirtyFile, Bool) in
            if let raced = dirty[inode] { return (raced, false) }
            dirty[inode] = file
            return (file, true)
        }
        if isNew { table.withLock { $0.hold(inode) } }
        return kept
    }

    func create(_ request: FUSERequest, parent: UInt64, name: String, flags: Int32) {
        guard !options.readOnly else { return request.fail(EROFS) }
        // A name the mount would not show (control characters) is not made either.
        guard FolderReader.isAcceptableName(name) else { return request.fail(EINVAL) }
        guard let path = table.withLock({ $0.path(of: name, in: parent) }) else { return request.fail(ENOENT) }
        let cachePath = cacheFolder + "/" + UUID().uuidString
        guard FileManager.default.createFile(atPath: cachePath, contents: nil) else { return request.fail(EIO) }
        do {
            let item = FileObject(path: path, type: .file, size: 0, modificationDate: Date())
            let inode = table.withLock { table in
                let inode = table.remember(item, as: name, in: parent)
                table.hold(inode)
                return inode
            }
            known.withLock { $0.add(name, in: parent) }
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
            do {
                try connectivity.requireOnline()
                try await uploader.uploadNow(file, fileSystem: self)
            } catch where Connectivity.isUnreachable(error) {
                // Offline: as on a local disk, fsync returns once the contents are on this
                // machine's disk and the upload they owe is journaled; it goes when the remote
                // answers again (mount-status lists it meanwhile).
                connectivity.noteFailure(error, fileSystem: self)
                try file.synchronizeLocally()
                enqueue(file)
                if file.snapshot.handles == 0 { uploader.schedule(file, fileSystem: self) }
            }
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
            guard FolderReader.isAcceptableName(name) else { throw POSIXError(.EINVAL) }
            guard let path = table.withLock({ $0.path(of: name, in: parent) }) else { throw POSIXError(.ENOENT) }
            if connectivity.isOnline {
                try await operations.createFolder(path: path, withIntermediateDirectories: false)
                undo?.recorder.record(UndoRecord(operation: .create, path: path, expected: ItemIdentity(type: .directory)), on: provider)
            } else {
                // Offline: made when the remote answers again (its name is taken here now).
                if known.withLock({ $0.isAbsent(name, in: parent) }) == false { throw POSIXError(.EHOSTUNREACH) }
                try journalOffline(ChangeJournal.Change(kind: .createFolder, path: path, isFolder: true))
            }
            // Described from what was asked (an empty folder, made now) rather than asked again:
            // `git clone` and `tar x` make a folder per few files. A listing or the monitor's
            // report of it brings the server's own times later.
            let item = FileObject(path: path, type: .directory, modificationDate: Date())
            let inode = table.withLock { $0.remember(item, as: name, in: parent) }
            known.withLock { known in
                known.add(name, in: parent)
                if followingChanges { known.made(inode) }
            }
            request.entry(inode: inode, attributes: attributes(of: inode), timeout: timeout)
        }
    }

    /// A symbolic link `name` in `parent` to `target`, where the provider keeps links (Local);
    /// `EPERM` elsewhere.
    func symlink(_ request: FUSERequest, target: String, parent: UInt64, name: String) {
        answer(request) { [self] in
            guard !options.readOnly else { throw POSIXError(.EROFS) }
            guard let links = provider as? any FileProviderSymbolicLinks else { throw POSIXError(.EPERM) }
            guard FolderReader.isAcceptableName(name) else { throw POSIXError(.EINVAL) }
            guard let path = table.withLock({ $0.path(of: name, in: parent) }) else { throw POSIXError(.ENOENT) }
            let item = try await links.createSymbolicLink(at: path, target: target)
            undo?.recorder.record(UndoRecord(operation: .create, path: path, expected: ItemIdentity(type: .symbolicLink)), on: provider)
            let inode = table.withLock { $0.remember(item, as: name, in: parent) }
            known.withLock { $0.add(name, in: parent) }
            request.entry(inode: inode, attributes: attributes(of: inode), timeout: timeout)
        }
    }

    /// The target of the symbolic link `inode`.
    func readlink(_ request: FUSERequest, inode: UInt64) {
        guard let node = table.withLock({ $0.node(inode) }), let path = table.withLock({ $0.path(of: inode) }) else {
            return request.fail(ENOENT)
        }
        guard node.item.isSymbolicLink else { return request.fail(EINVAL) }
        answer(request) { [self] in
            let target: String?
            if let links = provider as? any FileProviderSymbolicLinks {
                target = try await links.destinationOfSymbolicLink(at: path)
            } else {
                target = try await provider.attributesOfItem(path: path).extraProperties["symlink_target"]
            }
            guard let target, !target.isEmpty else { throw POSIXError(.EINVAL) }
            request.link(target)
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
                    if file.snapshot.existsRemotely { try await remove(path, recursive: false, operations: operations) }
                }
                dequeue(file)
                forgetDirty(file)
            } else {
                if let inode, connectivity.isOnline { try await keepOpenContents(of: inode) }
                let version = inode.flatMap { inode in table.withLock { $0.node(inode)?.item.versionTag } }
                try await remove(path, recursive: false, operations: operations, version: version)
            }
            if let inode { table.withLock { $0.unlink(inode) } }
            known.withLock { $0.remove(name, in: parent) }
            unpinRemoved(path)
            request.fail(0)
        }
    }

    func rmdir(_ request: FUSERequest, parent: UInt64, name: String) {
        answer(request) { [self] in
            guard !options.readOnly, let operations else { throw POSIXError(.EROFS) }
            guard let path = table.withLock({ $0.path(of: name, in: parent) }) else { throw POSIXError(.ENOENT) }
            let inode = table.withLock { $0.inode(of: name, in: parent) }
            let item: FileObject
            if connectivity.isOnline {
                item = try await provider.attributesOfItem(path: path)
            } else {
                // Offline: what the mount knows of it, and only a folder it knows to be empty.
                guard let inode, let known = table.withLock({ $0.node(inode)?.item }) else { throw POSIXError(.EHOSTUNREACH) }
                item = known
                if item.isDirectory, self.known.withLock({ $0.names(of: inode) })?.isEmpty != true {
                    throw POSIXError(self.known.withLock { $0.names(of: inode) } == nil ? .EHOSTUNREACH : .ENOTEMPTY)
                }
            }
            guard item.isDirectory else { throw POSIXError(.ENOTDIR) }
            try await remove(path, recursive: false, operations: operations, isFolder: true)
            if let inode { table.withLock { $0.unlink(inode) } }
            known.withLock { known in
                known.remove(name, in: parent)
                if let inode { known.forget(inode) }
            }
            unpinRemoved(path)
            request.fail(0)
        }
    }

    func rename(_ request: FUSERequest, parent: UInt64, name: String, newParent: UInt64, newName: String, flags: UInt32) {
        answer(request) { [self] in
            guard !options.readOnly, let operations else { throw POSIXError(.EROFS) }
            // RENAME_EXCHANGE (2) swaps two names: no backend can do that in one step.
            guard flags & 2 == 0, FolderReader.isAcceptableName(newName) else { throw POSIXError(.EINVAL) }
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
                    // (Offline: the upload replaces it later.)
                    if connectivity.isOnline, try await provider.itemIfPresent(path: target) != nil {
                        if noReplace { throw POSIXError(.EEXIST) }
                        if replacedFile == nil { try await remove(target, recursive: true, operations: operations) }
                    }
                } else {
                    try await rename(source, to: target, overwrite: !noReplace, operations: operations)
                }
                if let replacedFile {
                    replacedFile.markRemoved()
                    dequeue(replacedFile)
                    forgetDirty(replacedFile)
                }
                if let inode { table.withLock { $0.move(inode, to: newName, in: newParent) } }
                known.withLock { known in
                    known.remove(name, in: parent)
                    known.add(newName, in: newParent)
                }
                do {
                    try queue?.move(from: source, to: target)
                    try readCache.movePins(from: source, to: target)
                } catch {
                    logger.warning("upload queue or pins not updated for a rename", metadata: ["error": .string("\(error)")])
                }
            }
            if let replaced, replacedFile == nil, connectivity.isOnline { try await keepOpenContents(of: replaced) }
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

    /// Changed on the remote and through the mount: the remote's version keeps the name, the
    /// mount's changes are moved to `NAME (conflict YYYY-MM-DD HHMMSS).EXT` beside it and
    /// uploaded there (now, with `schedule`, once no handle holds the file); logged.
    func keepBoth(_ inode: UInt64, path: String, schedule: Bool = true) {
        guard let resolved = table.withLock({ $0.resolve(path) }), let parent = resolved.parent else { return }
        let conflict = Self.conflictName(resolved.name, date: Date())
        let target = table.withLock { table in
            table.move(inode, to: conflict, in: parent)
            return table.path(of: inode) ?? path
        }
        let file = dirty.withLock { $0[inode] }
        file?.markLocalOnly()
        conflicted.withLock { _ = $0.insert(inode) }
        do {
            try queue?.move(from: path, to: target)
        } catch {
            logger.warning("upload queue not updated for a conflict copy", metadata: ["error": .string("\(error)")])
        }
        logger.warning("changed on the remote and through the mount: both kept", metadata: [
            "remote": .string(path), "mount": .string(target),
        ])
        options.events?(.conflict(path: path, copy: target))
        session.withLock { $0 }?.invalidateEntry(parent: parent, name: resolved.name)
        session.withLock { $0 }?.invalidateEntry(parent: parent, name: conflict)
        if schedule, let file, file.snapshot.handles == 0 { uploader.schedule(file, fileSystem: self) }
    }

    /// `NAME (conflict YYYY-MM-DD HHMMSS).EXT` (UTC).
    static func conflictName(_ name: String, date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HHmmss"
        let stamp = " (conflict \(formatter.string(from: date)))"
        let ext = (name as NSString).pathExtension
        guard !ext.isEmpty, name.count > ext.count + 1 else { return name + stamp }
        return (name as NSString).deletingPathExtension + stamp + "." + ext
    }

    /// Drops a dirty file that no handle holds and nothing needs to upload.
    func forgetDirty(_ file: DirtyFile) {
        let state = file.snapshot
        guard state.handles == 0, state.removed || state.generation == state.uploaded else { return }
        let dropped = dirty.withLock { dirty -> Bool in
            guard dirty[file.inode] === file else { return false }
            dirty[file.inode] = nil
            return true
        }
        if dropped { table.withLock { $0.release(file.inode) } }
    }

    /// Uploads one dirty file to its current name; updates what the mount knows of it.
    func upload(_ file: DirtyFile) async throws {
        let inode = file.inode
        let send = { [self] in
            let stored = try await file.upload(to: { [self] in table.withLock { $0.path(of: inode) } }, provider: provider, undo: undo) { [self] stored in
                table.withLock { $0.update(inode, item: stored) }
                noteOwnChange(inode)
            }
            if let stored {
                options.events?(.uploaded(path: stored.path, size: stored.size ?? file.size))
                // A pinned file is kept at its new version too.
                if readCache.isPinned(stored.path) { materializer.schedule(stored.path, fileSystem: self) }
            }
        }
        do {
            try await send()
        } catch FileProviderError.versionMismatch {
            // Changed on the remote since the contents were made from it: the remote's version
            // keeps the name, this one goes beside it.
            guard let path = table.withLock({ $0.path(of: inode) }) else { throw POSIXError(.ENOENT) }
            keepBoth(inode, path: path, schedule: false)
            try await send()
        } catch where error.failureKind == .notFound || error.failureKind == .conflict {
            // Its folder was removed on the remote meanwhile (a file made offline in a folder
            // removed there): the folder is made again, nothing written here is lost.
            guard let path = table.withLock({ $0.path(of: inode) }), let operations else { throw error }
            let parent = (path as NSString).deletingLastPathComponent
            guard try await provider.itemIfPresent(path: parent) == nil else { throw error }
            logger.warning("the folder of a file written through the mount was removed on the remote; it is made again",
                           metadata: ["path": .string(path)])
            try await operations.createFolder(path: parent, withIntermediateDirectories: true)
            try await send()
        }
        if !file.isModified { dequeue(file) }
        forgetDirty(file)
    }

    /// Starts offline: the uploads an earlier mount owes become files written through this one
    /// (read from their cache files, sent when the remote answers).
    func startOffline(owed: [UploadQueue.Entry]) throws {
        for entry in owed {
            let cachePath = cacheFolder + "/" + entry.cacheFile
            guard let size = (try? FileManager.default.attributesOfItem(atPath: cachePath)[.size] as? Int).flatMap({ $0 }) else { continue }
            let item = FileObject(path: entry.path, type: .file, size: Int64(size), modificationDate: entry.modificationDate ?? Date())
            guard let inode = table.withLock({ $0.holdPath(entry.path, item: item) }) else { continue }
            // On the remote as far as the kept listing knows (else a file made offline).
            let folder = (entry.path as NSString).deletingLastPathComponent
            let listed = (try? listings?.item(named: item.name, in: folder.isEmpty ? "/" : folder)).flatMap { $0 } != nil
            let file = try DirtyFile(inode: inode, cachePath: cachePath, size: Int64(size), modified: true, existsRemotely: listed)
            if let date = entry.modificationDate { file.setModificationDate(date) }
            dirty.withLock { $0[inode] = file }
        }
        connectivity.startOffline(fileSystem: self)
        for file in dirty.withLock({ Array($0.values) }) { uploader.schedule(file, fileSystem: self) }
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
