import Foundation
import GatewayCore
import GatewayState
import Logging

/// Keeps what the kernel caches true to the remote: the provider's change monitor (inotify on
/// Local, `sync-collection` or polling elsewhere) is followed from the anchor taken at mount time,
/// and each change is pushed into the kernel (`notify_inval_entry` for names, `notify_delete`
/// for removals, so `inotify` watchers inside the mount see them, `notify_inval_inode` for
/// contents and attributes). So a change made on the remote shows within the poll interval plus
/// a moment, while names and attributes are otherwise kept for the long attribute timeout.
///
/// A remote change to a file with changes not yet uploaded keeps both: the remote's version
/// takes the name, and the local one is uploaded beside it as `NAME (conflict YYYY-MM-DD
/// HHMMSS).EXT` (logged).
struct Coherence: Sendable {
    let fileSystem: MountFileSystem
    let session: FUSESession
    let monitor: any FileProviderMonitor
    let anchor: SyncAnchor
    /// Whether `anchor` is the one an earlier mount saved (an expired one is replaced by a fresh
    /// anchor, after a full listing, instead of giving up).
    let resumed: Bool
    /// Where each page's anchor is saved, once its changes are applied.
    let anchors: MountAnchors?
    let interval: Duration
    let logger: Logger

    /// Follows the changes until the task is cancelled; a monitor that fails is started again
    /// from the last anchor after a pause (said once per outage).
    func run() async {
        logger.debug("following remote changes", metadata: ["every": .stringConvertible(interval)])
        var anchor = self.anchor
        var failing = false
        var resumed = self.resumed
        var catchingUp = self.resumed
        var caughtUpChanges = 0
        let root = fileSystem.table.withLock { $0.rootPath }
        while !Task.isCancelled {
            do {
                for try await page in monitor.changePages(since: anchor, options: MonitorOptions(recursive: true, interval: interval)) {
                    if failing {
                        logger.info("following remote changes again")
                        failing = false
                    }
                    for event in page.events { apply(event) }
                    if let listings = fileSystem.listings {
                        let changes = page.events.flatMap(Self.listingChanges)
                        fileSystem.listingWrites.async { [logger] in
                            do {
                                try listings.apply(changes)
                            } catch {
                                logger.debug("kept listings not updated", metadata: ["error": .string("\(error)")])
                            }
                        }
                    }
                    anchor = page.anchor
                    resumed = false
                    if catchingUp {
                        caughtUpChanges += page.events.count
                        if !page.moreComing {
                            catchingUp = false
                            logger.debug("caught up with the changes since the last mount", metadata: ["changes": .stringConvertible(caughtUpChanges)])
                            fileSystem.options.events?(.caughtUp(changes: caughtUpChanges))
                        }
                    }
                    do {
                        try anchors?.save(anchor, remote: fileSystem.provider.name, root: root)
                    } catch {
                        logger.debug("the change monitor's anchor was not saved", metadata: ["error": .string("\(error)")])
                    }
                }
                return
            } catch {
                if Task.isCancelled { return }
                if resumed, (error as? FileProviderError).map({ if case .anchorExpired = $0 { true } else { false } }) == true {
                    // What changed while nothing was mounted can't be told: start afresh from
                    // a full listing. Cached contents are of known versions and stay; pinned
                    // items are checked again.
                    logger.warning("the anchor the last mount saved has expired; listing the remote afresh",
                                   metadata: ["error": .string("\(error)")])
                    try? anchors?.clear()
                    do {
                        anchor = try await monitor.currentAnchor(at: root, recursive: true)
                        let saved = (try? anchors?.save(anchor, remote: fileSystem.provider.name, root: root)) != nil
                        resumed = false
                        catchingUp = false
                        fileSystem.options.events?(.listedAfresh(anchorSaved: saved))
                        for pinned in fileSystem.readCache.pins { fileSystem.materializer.schedule(pinned, fileSystem: fileSystem) }
                        continue
                    } catch {
                        if Task.isCancelled { return }
                    }
                }
                if error.failureKind == .notFound || (error as? FileProviderError).map({ if case .anchorExpired = $0 { true } else { false } }) == true {
                    logger.warning("remote changes can no longer be followed; names and attributes refresh after the attribute timeout",
                                   metadata: ["error": .string("\(error)")])
                    // What the mount made may change unseen from now on.
                    fileSystem.known.withLock { $0 = KnownFolders() }
                    return
                }
                if !failing {
                    logger.warning("following remote changes failed; trying again", metadata: ["error": .string("\(error)")])
                    failing = true
                }
                fileSystem.connectivity.noteFailure(error, fileSystem: fileSystem)
                try? await Task.sleep(for: max(interval, .seconds(1)))
            }
        }
    }

    /// Pushes one change into the kernel and the inode table; a pinned item created or changed
    /// is fetched at its new version.
    func apply(_ event: FileChangeEvent) {
        logger.debug("remote change", metadata: ["kind": .string(event.kind.rawValue), "path": .string(event.path)])
        fileSystem.remoteChanges.withLock { $0 &+= 1 }
        defer {
            if event.kind != .removed, event.item?.isDirectory != true, fileSystem.readCache.isPinned(event.path) {
                fileSystem.materializer.schedule(event.path, fileSystem: fileSystem)
            }
        }
        // Folders the mount made keep knowing their names: what appears is added, what goes removed.
        if let resolved = fileSystem.table.withLock({ $0.resolve(event.path) }), let parent = resolved.parent {
            fileSystem.known.withLock { known in
                if event.kind == .removed { known.remove(resolved.name, in: parent) } else { known.add(resolved.name, in: parent) }
            }
        }
        if event.kind == .renamed, let previous = event.previousPath,
           let resolved = fileSystem.table.withLock({ $0.resolve(previous) }), let parent = resolved.parent {
            fileSystem.known.withLock { $0.remove(resolved.name, in: parent) }
        }
        // Contents kept of versions the remote no longer has go (pinned ones are fetched anew).
        switch event.kind {
        case .modified:
            if let item = event.item, item.type == .file {
                let key = FileProviderCache.Key(item, generation: fileSystem.generation(of: event.path))
                fileSystem.readCache.dropOtherVersions(of: event.path, keeping: key)
            }
        case .removed:
            fileSystem.readCache.discard(event.path)
        case .renamed:
            if let previous = event.previousPath { fileSystem.readCache.discard(previous) }
        case .created:
            break
        }
        switch event.kind {
        case .created:
            invalidateName(event.path, item: event.item)
        case .modified:
            guard let resolved = fileSystem.table.withLock({ $0.resolve(event.path) }) else { return }
            if let inode = resolved.inode {
                if let item = event.item, !item.isDirectory, conflicts(inode, remote: item) { fileSystem.keepBoth(inode, path: event.path) }
                if let item = event.item, fileSystem.dirty.withLock({ $0[inode] }) == nil {
                    let known = fileSystem.table.withLock { $0.node(inode)?.item }
                    // The mount's own upload comes back as a change: nothing new for the kernel.
                    if let mine = known?.versionTag, let theirs = item.versionTag, VersionTag.same(mine, theirs) { return }
                    fileSystem.table.withLock { $0.update(inode, item: item) }
                }
                session.invalidateInode(inode)
                if keepsEntry(inode, item: event.item) { return }
            }
            if let parent = resolved.parent { session.invalidateEntry(parent: parent, name: resolved.name) }
        case .removed:
            guard let resolved = fileSystem.table.withLock({ $0.resolve(event.path) }) else { return }
            if let inode = resolved.inode, fileSystem.dirty.withLock({ $0[inode] })?.isModified == true {
                // Removed there, changed here: the local version stays and is uploaded again.
                logger.warning("removed on the remote while changed through the mount; the mount's version is kept",
                               metadata: ["path": .string(event.path)])
                return
            }
            if let parent = resolved.parent, let inode = resolved.inode {
                fileSystem.table.withLock { $0.unlink(inode) }
                session.notifyDelete(parent: parent, child: inode, name: resolved.name)
            } else {
                invalidateName(event.path)
            }
        case .renamed:
            if let previous = event.previousPath {
                if let resolved = fileSystem.table.withLock({ $0.resolve(previous) }), let parent = resolved.parent {
                    if let inode = resolved.inode { fileSystem.table.withLock { $0.unlink(inode) } }
                    session.invalidateEntry(parent: parent, name: resolved.name)
                }
            }
            invalidateName(event.path, item: event.item)
        }
    }

    /// What `event` changes in the listings kept for work offline.
    static func listingChanges(_ event: FileChangeEvent) -> [FolderListings.Change] {
        switch event.kind {
        case .created, .modified:
            return event.item.map { [.put($0)] } ?? []
        case .removed:
            return [.remove(event.path)]
        case .renamed:
            return (event.previousPath.map { [.move($0, to: event.path)] } ?? []) + (event.item.map { [.put($0)] } ?? [.remove(event.path)])
        }
    }

    /// Drops the kernel's entry for `path` (a cached absence included), and the folder's pages.
    /// A folder the kernel already knows under that name, and which is still a folder (often the
    /// mount's own `mkdir` coming back as a change), keeps its entry: only its attributes and
    /// pages are dropped (see `keepsEntry`).
    private func invalidateName(_ path: String, item: FileObject? = nil) {
        guard let resolved = fileSystem.table.withLock({ $0.resolve(path) }), let parent = resolved.parent else { return }
        if let inode = resolved.inode, keepsEntry(inode, item: item) {
            session.invalidateInode(inode)
        } else {
            session.invalidateEntry(parent: parent, name: resolved.name)
        }
        session.invalidateInode(parent)
    }

    /// Whether the kernel's entry for the folder `inode` stays right after a change that says the
    /// item under its name is the folder `item`: the name still leads to the same inode. Dropping
    /// it anyway would unhash the folder's dentry, and every program working in it (a `git` in a
    /// clone it is writing) would lose its working directory: `getcwd` fails with ENOENT.
    private func keepsEntry(_ inode: UInt64, item: FileObject?) -> Bool {
        guard item?.isDirectory == true else { return false }
        return fileSystem.table.withLock { $0.node(inode)?.item.isDirectory } == true
    }

    /// Whether `inode` has changes not yet uploaded and the remote now holds another version
    /// than the one they were made on.
    private func conflicts(_ inode: UInt64, remote: FileObject) -> Bool {
        guard let file = fileSystem.dirty.withLock({ $0[inode] }), file.isModified, file.snapshot.existsRemotely,
              let base = file.snapshot.base, let now = remote.versionTag else { return false }
        return !VersionTag.same(base, now)
    }
}
