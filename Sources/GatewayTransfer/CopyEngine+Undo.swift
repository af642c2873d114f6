import GatewayCore
import Synchronization

extension CopyEngine {
    /// What one file's copy needs for undo: the hook that trashes the file it replaces, and the
    /// records it reports. Each is recorded ahead of its change (``UndoRecord/isTentative``): a
    /// creation or move before the write or rename, an overwrite as soon as the old file is in the
    /// trash. So a run killed at any point is undone for everything it did.
    final class FileUndo: Sendable {
        private let trash: Trash?
        private let sourceTrash: (any FileProviderUndoable)?
        private let useTrash: Bool
        private let recorder: (any UndoRecorder)?
        private let target: TransferEndpoint
        private let identity: ItemIdentity
        private let replaced = Mutex<TrashedItem?>(nil)
        /// Tentative records to confirm once the copy is done.
        private let pending = Mutex<[UndoRecordHandle]>([])

        init(options: CopyOptions, mode: CopyMode, job: CopyEngine.Job, source: TransferEndpoint, target: TransferEndpoint,
             existing: FileObject?, serverSideMove: Bool) {
            let destinationTrash = options.useTrash ? (target.provider as? any FileProviderUndoable)?.trash : nil
            trash = existing == nil ? nil : destinationTrash
            sourceTrash = mode == .move && !serverSideMove ? source.provider as? any FileProviderUndoable : nil
            useTrash = options.useTrash
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
                    remember(recorder?.record(UndoRecord(operation: .move, path: target.path, source: source.path, expected: identity,
                                                         isTentative: true), on: target.provider))
                }
            } else if existing == nil {
                remember(recorder?.record(UndoRecord(operation: .create, path: target.path, expected: identity, isTentative: true),
                                          on: target.provider))
            }
            if let trash {
                transfer.beforeReplacing = { [self] path in
                    guard replaced.withLock({ $0 }) == nil else { return }
                    let item: TrashedItem
                    do {
                        item = try await trash.trashItem(at: path)
                    } catch where error.failureKind == .notFound {
                        return
                    }
                    replaced.withLock { $0 = item }
                    // Recorded at once: a run killed before the new file takes the name is undone
                    // by putting the old one back.
                    remember(recorder?.record(UndoRecord(operation: serverSideMove ? .move : .overwrite, path: path,
                                                         source: serverSideMove ? source.path : nil, trashName: item.name,
                                                         trashVolume: item.volume, expected: identity, isTentative: true),
                                              on: target.provider))
                }
            }
            // A moved file's source: to its trash, and recorded either way (a permanent removal too,
            // so undo says the source cannot come back).
            if let sourceTrash {
                let recorder = recorder, useTrash = useTrash
                transfer.removeSource = { path in
                    let record = try await sourceTrash.removeItemUndoably(path: path, recursive: false, useTrash: useTrash)
                    recorder?.record(record, on: sourceTrash)
                }
            }
        }

        /// Reports what only the end of a copy tells: a file it replaced for good (without a trash;
        /// one in the trash was recorded as it went there).
        func finish(existing: FileObject?, serverSideMove: Bool, source: TransferEndpoint) {
            guard let recorder else { return }
            for handle in pending.withLock({ $0 }) { recorder.confirm(handle) }
            guard existing != nil else { return }
            let trashed = replaced.withLock { $0 }
            guard trashed == nil else { return }  // recorded when it went to the trash
            if serverSideMove {
                recorder.record(UndoRecord(operation: .move, path: target.path, source: source.path, trashName: trashed?.name,
                                           trashVolume: trashed?.volume, expected: identity), on: target.provider)
            } else {
                recorder.record(UndoRecord(operation: .overwrite, path: target.path, trashName: trashed?.name, trashVolume: trashed?.volume,
                                           expected: identity, isPermanent: trashed == nil), on: target.provider)
            }
        }

        private func remember(_ handle: UndoRecordHandle?) {
            if let handle { pending.withLock { $0.append(handle) } }
        }

        /// The copy failed for good: a file already moved to the trash goes back to its name (in a
        /// task of its own, so a cancelled run still does it).
        func failed() async {
            guard let trashed = replaced.withLock({ $0 }), let trash else { return }
            let target = target
            await Task {
                guard (try? await target.provider.itemIfPresent(path: target.path)) == .some(nil) else { return }
                try? await trash.restore(trashed, to: target.path)
            }.value
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

        /// Whether to pass over `item`, a source item at `relative` that would land at that path
        /// below `destination` (the destination's root): a trash or temporary on the source's side,
        /// or something that would land in the destination's trash (`other`'s).
        mutating func skips(_ item: FileObject, relative: String, landingIn destination: String, on other: inout TreeFilter) -> Bool {
            if skips(item) { return true }
            var landing = item
            landing.path = (try? RemotePath.join(destination, relative)) ?? item.path
            return other.skips(landing)
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
