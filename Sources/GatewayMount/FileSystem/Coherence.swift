import Foundation
import GatewayCore
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
    let interval: Duration
    let logger: Logger

    /// Follows the changes until the task is cancelled; a monitor that fails is started again
    /// from the last anchor after a pause (said once per outage).
    func run() async {
        logger.debug("following remote changes", metadata: ["every": .stringConvertible(interval)])
        var anchor = self.anchor
        var failing = false
        while !Task.isCancelled {
            do {
                for try await page in monitor.changePages(since: anchor, options: MonitorOptions(recursive: true, interval: interval)) {
                    if failing {
                        logger.info("following remote changes again")
                        failing = false
                    }
                    fileSystem.reachable.withLock { $0 = true }
                    for event in page.events { apply(event) }
                    anchor = page.anchor
                }
                return
            } catch {
                if Task.isCancelled { return }
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
                fileSystem.reachable.withLock { $0 = false }
                try? await Task.sleep(for: max(interval, .seconds(1)))
            }
        }
    }

    /// Pushes one change into the kernel and the inode table; a pinned item created or changed
    /// is fetched at its new version.
    func apply(_ event: FileChangeEvent) {
        logger.debug("remote change", metadata: ["kind": .string(event.kind.rawValue), "path": .string(event.path)])
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
        switch event.kind {
        case .created:
            invalidateName(event.path)
        case .modified:
            guard let resolved = fileSystem.table.withLock({ $0.resolve(event.path) }) else { return }
            if let inode = resolved.inode {
                if let item = event.item, !item.isDirectory, conflicts(inode, remote: item) { fileSystem.keepBoth(inode, path: event.path) }
                if let item = event.item, fileSystem.dirty.withLock({ $0[inode] }) == nil {
                    let known = fileSystem.table.withLock { $0.node(inode)?.item }
                    // The mount's own upload comes back as a change: nothing new for the kernel.
                    if known?.versionTag != nil, known?.versionTag == item.versionTag { return }
                    fileSystem.table.withLock { $0.update(inode, item: item) }
                }
                session.invalidateInode(inode)
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
            invalidateName(event.path)
        }
    }

    /// Drops the kernel's entry for `path` (a cached absence included), and the folder's pages.
    private func invalidateName(_ path: String) {
        guard let resolved = fileSystem.table.withLock({ $0.resolve(path) }), let parent = resolved.parent else { return }
        session.invalidateEntry(parent: parent, name: resolved.name)
        session.invalidateInode(parent)
    }

    /// Whether `inode` has changes not yet uploaded and the remote now holds another version
    /// than the one they were made on.
    private func conflicts(_ inode: UInt64, remote: FileObject) -> Bool {
        guard let file = fileSystem.dirty.withLock({ $0[inode] }), file.isModified, file.snapshot.existsRemotely,
              let base = file.snapshot.base, let now = remote.versionTag else { return false }
        return base != now
    }
}
