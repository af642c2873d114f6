import Foundation
import GatewayCore
import GatewayState

/// The remote's trash and the undo journal, for a mount made with ``MountOptions/undoRecorder``.
struct MountUndo: Sendable {
    let provider: any FileProviderUndoable
    let recorder: any UndoRecorder
}

extension MountFileSystem {
    /// Where removals and replacements go to the trash and changes are recorded (`--trash`).
    var undo: MountUndo? {
        guard let recorder = options.undoRecorder, let undoable = provider as? any FileProviderUndoable, undoable.trash != nil else {
            return nil
        }
        return MountUndo(provider: undoable, recorder: recorder)
    }

    /// Removes `path`: into the trash, recorded, with `--trash`; for good otherwise. With the
    /// `version` the mount knew, a file changed on the remote since then is not removed (as a
    /// File Provider removal names the version it removes): the remote's version stays, the
    /// mount knows it at that version from then on; the removal fails with `EBUSY` (not
    /// `ESTALE`: the kernel would retry it at once, and the retry would remove the new version).
    func remove(_ path: String, recursive: Bool, operations: any FileProviderOperations, version: String? = nil,
                isFolder: Bool = false) async throws {
        // Offline: journaled, applied when the remote answers again (``ChangeReplay``).
        if !connectivity.isOnline {
            try journalOffline(ChangeJournal.Change(kind: .remove, path: path, version: version, isFolder: isFolder))
            return
        }
        if !isFolder, let version {
            // Gone already: what was asked for is done.
            guard let item = try await provider.itemIfPresent(path: path) else { return }
            if ChangeReplay.changedRemotely(item, since: version) {
                logger.warning("removed through the mount, but changed on the remote since the mount saw it: the remote's version is kept",
                               metadata: ["path": .string(path)])
                table.withLock { table in
                    if let inode = table.resolve(path)?.inode { table.update(inode, item: item) }
                }
                throw POSIXError(.EBUSY)
            }
        }
        if let undo {
            undo.recorder.record(try await undo.provider.removeItemUndoably(path: path, recursive: recursive), on: provider)
        } else {
            try await operations.removeItem(path: path, recursive: recursive)
        }
    }

    /// Renames `source` to `target`: what `target` held goes to the trash first, and the move is
    /// recorded, with `--trash`.
    func rename(_ source: String, to target: String, overwrite: Bool, operations: any FileProviderOperations) async throws {
        if !connectivity.isOnline {
            try journalOffline(ChangeJournal.Change(kind: .rename, path: source, target: target))
            return
        }
        if let undo {
            undo.recorder.record(try await undo.provider.moveItemUndoably(path: source, to: target, overwrite: overwrite), on: provider)
        } else {
            try await operations.moveItem(path: source, to: target, overwrite: overwrite)
        }
    }

    /// Records a folder change made while offline; refused (`EHOSTUNREACH`) without a journal.
    func journalOffline(_ change: ChangeJournal.Change) throws {
        guard let journal else { throw POSIXError(.EHOSTUNREACH) }
        do {
            try journal.append(change)
        } catch {
            logger.warning("a change made offline could not be journaled", metadata: ["error": .string("\(error)")])
            throw POSIXError(.EIO)
        }
        // The kept listings show the change at once (a folder listed offline is read from them).
        var listed: [FolderListings.Change] = []
        switch change.kind {
        case .createFolder:
            listed = [.put(FileObject(path: change.path, type: .directory, modificationDate: Date())), .emptyFolder(change.path)]
        case .remove:
            listed = [.remove(change.path)]
        case .rename:
            guard let target = change.target else { break }
            // Moved with what is kept under it; the row from what the mount knows of the item
            // where its folder's listing had none.
            listed = [.move(change.path, to: target)]
            if let inode = table.withLock({ $0.resolve(change.path)?.inode }), var item = table.withLock({ $0.node(inode)?.item }) {
                item.path = target
                item.name = (target as NSString).lastPathComponent
                listed.append(.put(item))
            }
        }
        // In order with the writes queued before it, and done before the change is answered.
        listingWrites.sync {
            do {
                try listings?.apply(listed)
            } catch {
                logger.debug("kept listings not updated", metadata: ["error": .string("\(error)")])
            }
        }
    }

    /// Applies the changes made offline; `false` when the remote stopped answering meanwhile.
    func replayChanges() async -> Bool {
        guard let journal else { return true }
        return await ChangeReplay(journal: journal, provider: provider, undo: undo, logger: logger).run()
    }
}
