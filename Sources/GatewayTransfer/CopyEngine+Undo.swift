import GatewayCore
import Synchronization

extension CopyEngine {
    /// What one file's copy needs for undo: the hook that trashes the file it replaces, and the
    /// records it reports. Creations and moves are recorded ahead of the change
    /// (``UndoRecord/isTentative``), so a run killed at any point is undone for what it made; an
    /// overwrite once it is done (its old file is in the trash either way).
    final class FileUndo: Sendable {
        private let trash: Trash?
        private let sourceTrash: (any FileProviderUndoable)?
        private let recorder: (any UndoRecorder)?
        private let target: TransferEndpoint
        private let identity: ItemIdentity
        private let replaced = Mutex<TrashedItem?>(nil)

        init(options: CopyOptions, mode: CopyMode, job: CopyEngine.Job, source: TransferEndpoint, target: TransferEndpoint,
             existing: FileObject?, serverSideMove: Bool) {
            let destinationTrash = options.useTrash ? (target.provider as? any FileProviderUndoable)?.trash : nil
            trash = existing == nil ? nil : destinationTrash
            sourceTrash = mode == .move && options.useTrash && !serverSideMove ? source.provider as? any FileProviderUndoable : nil
            recorder = options.undoRecorder
            self.target = target
            let preservesTimes = options.preserveModificationTimes && target.provider.capabilities.supports(.setModificationDate)
            identity = ItemIdentity(type: .file, size: job.source.size, modificationDate: preservesTimes ? job.source.modificationDate : nil)
        }

        /// Sets the transfer's hooks and writes the records due before it starts.
        func begin(_ transfer: inout TransferOptions, source: TransferEndpoint, existing: FileObject?, serverSideMove: Bool) {
            if serverSideMove {
                // The file it replaces (if any) is recorded with it once trashed.
                if existing == nil {
                    recorder?.record(UndoRecord(operation: .move, path: target.path, source: source.path, expected: identity,
                                                isTentative: true), on: target.provider)
                }
            } else if existing == nil {
                recorder?.record(UndoRecord(operation: .create, path: target.path, expected: identity, isTentative: true), on: target.provider)
            }
            if let trash {
                transfer.beforeReplacing = { [self] path in
                    guard replaced.withLock({ $0 }) == nil else { return }
                    do {
                        let item = try await trash.trashItem(at: path)
                        replaced.withLock { $0 = item }
                    } catch where error.failureKind == .notFound {}
                }
            }
            if let sourceTrash, let recorder {
                transfer.removeSource = { path in
                    let record = try await sourceTrash.removeItemUndoably(path: path, recursive: false)
                    recorder.record(record, on: sourceTrash)
                }
            } else if let sourceTrash {
                transfer.removeSource = { path in _ = try await sourceTrash.removeItemUndoably(path: path, recursive: false) }
            }
        }

        /// Reports what only the end of a copy tells: the file it replaced (in the trash, or gone
        /// for good without one). (Killed between the two renames of an overwrite, the old file is
        /// in the trash without a record: `gateway trash list` shows it.)
        func finish(existing: FileObject?, serverSideMove: Bool, source: TransferEndpoint) {
            guard let recorder, existing != nil else { return }
            let trashed = replaced.withLock { $0 }
            if serverSideMove {
                recorder.record(UndoRecord(operation: .move, path: target.path, source: source.path, trashName: trashed?.name,
                                           trashVolume: trashed?.volume, expected: identity), on: target.provider)
            } else {
                recorder.record(UndoRecord(operation: .overwrite, path: target.path, trashName: trashed?.name, trashVolume: trashed?.volume,
                                           expected: identity, isPermanent: trashed == nil), on: target.provider)
            }
        }

        /// The copy failed for good: a file already moved to the trash goes back to its name.
        func failed() async {
            guard let trashed = replaced.withLock({ $0 }), let trash,
                  (try? await target.provider.itemIfPresent(path: target.path)) == .some(nil) else { return }
            try? await trash.restore(trashed, to: target.path)
        }
    }

    /// Removes `item` at the destination (a sync's extra): into the trash where there is one, and
    /// reported to the undo recorder.
    func removeExtra(_ item: FileObject, on provider: any FileProviderOperations) async throws {
        if options.useTrash, let undoable = provider as? any FileProviderUndoable, undoable.trash != nil {
            let record = try await undoable.removeItemUndoably(path: item.path, recursive: true)
            options.undoRecorder?.record(record, on: provider)
            return
        }
        try await provider.removeItem(path: item.path, recursive: true)
        options.undoRecorder?.record(UndoRecord(operation: .remove, path: item.path, isPermanent: true), on: provider)
    }

    /// What a copy never reads, copies into or deletes: the trash folders inside either tree, and
    /// gateway temporary files (`.NAME.gateway-….partial`: an atomic or resumable write in
    /// progress, or left by a killed one). Fed the items of one walk in order.
    struct TreeFilter: Sendable {
        private var excluded: Set<String> = []
        private let trashes: [Trash]

        init(_ providers: [any FileProviderBasic]) async {
            trashes = providers.compactMap { ($0 as? any FileProviderUndoable)?.trash }
            for trash in trashes {
                for folder in await trash.folderPaths() { excluded.insert(folder) }
            }
        }

        /// Whether to pass over `item` (and, for a folder, remember it, so its contents are passed
        /// over too).
        mutating func skips(_ item: FileObject) -> Bool {
            let name = item.name.isEmpty ? RemotePath.lastComponent(of: item.path) : item.name
            if name.hasPrefix("."), name.hasSuffix(".partial"), name.contains(".gateway-") { return true }
            if !excluded.isEmpty {
                var probe = item.path
                while probe != "/" {
                    if excluded.contains(probe) { return true }
                    probe = RemotePath.parent(of: probe)
                }
            }
            if item.isDirectory, trashes.contains(where: { $0.locator.isTrashFolder(item.path) }) {
                excluded.insert(item.path)
                return true
            }
            return false
        }
    }
}
