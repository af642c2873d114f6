import GatewayCore
import Synchronization

extension CopyEngine {
    /// What one file's copy needs for undo: the hook that trashes the file it replaces, and the
    /// records it reports. Records are written ahead of the change (``UndoRecord/isTentative``), so
    /// a run killed at any point is undone for everything it did: a creation or move is recorded
    /// before the file is written or renamed, an overwrite right after the old file went to the
    /// trash and before the new one takes its name.
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
                    let item: TrashedItem
                    do {
                        item = try await trash.trashItem(at: path)
                    } catch where error.failureKind == .notFound {
                        return
                    }
                    replaced.withLock { $0 = item }
                    let operation: UndoRecord.Operation = serverSideMove ? .move : .overwrite
                    recorder?.record(UndoRecord(operation: operation, path: path, source: serverSideMove ? source.path : nil,
                                                trashName: item.name, trashVolume: item.volume, expected: identity, isTentative: true),
                                     on: target.provider)
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

        /// Reports what only the end of a copy tells: a file replaced for good (no trash).
        func finish(existing: FileObject?, serverSideMove: Bool, source: TransferEndpoint) {
            guard let recorder, existing != nil, replaced.withLock({ $0 }) == nil else { return }
            if serverSideMove {
                recorder.record(UndoRecord(operation: .move, path: target.path, source: source.path, expected: identity), on: target.provider)
            } else {
                recorder.record(UndoRecord(operation: .overwrite, path: target.path, expected: identity, isPermanent: true), on: target.provider)
            }
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

    /// Paths a copy never reads or deletes: the trash folders inside either tree.
    static func excludedPaths(_ providers: [any FileProviderBasic]) async -> Set<String> {
        var paths: Set<String> = []
        for provider in providers {
            guard let trash = (provider as? any FileProviderUndoable)?.trash else { continue }
            for folder in await trash.folderPaths() { paths.insert(folder) }
        }
        return paths
    }

    /// Whether `path` is one of `excluded` or lies below one, or is a gateway temporary file
    /// (`.NAME.gateway-….partial`: an atomic or resumable write in progress, or left by a killed one).
    static func isExcluded(_ path: String, _ excluded: Set<String>) -> Bool {
        let name = RemotePath.lastComponent(of: path)
        if name.hasPrefix("."), name.hasSuffix(".partial"), name.contains(".gateway-") { return true }
        guard !excluded.isEmpty else { return false }
        var probe = path
        while probe != "/" {
            if excluded.contains(probe) { return true }
            probe = RemotePath.parent(of: probe)
        }
        return false
    }
}
