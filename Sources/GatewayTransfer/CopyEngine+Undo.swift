import GatewayCore
import Synchronization

extension CopyEngine {
    /// What one file's copy needs for undo: the hook that trashes the file it replaces, and the
    /// records to report once it is done.
    final class FileUndo: Sendable {
        private let trash: Trash?
        private let sourceTrash: (any FileProviderUndoable)?
        private let recorder: (any UndoRecorder)?
        private let replaced = Mutex<TrashedItem?>(nil)
        private let sourceRecord = Mutex<UndoRecord?>(nil)

        init(options: CopyOptions, mode: CopyMode, source: TransferEndpoint, destination: TransferEndpoint, existing: FileObject?) {
            let destinationTrash = options.useTrash ? (destination.provider as? any FileProviderUndoable)?.trash : nil
            trash = existing == nil ? nil : destinationTrash
            sourceTrash = mode == .move && options.useTrash ? source.provider as? any FileProviderUndoable : nil
            recorder = options.undoRecorder
        }

        /// Sets the transfer's hooks: the replaced file goes to the trash (once, whatever the
        /// attempts), and a moved file's source too.
        func configure(_ transfer: inout TransferOptions) {
            if let trash {
                transfer.beforeReplacing = { [self] target in
                    guard replaced.withLock({ $0 }) == nil else { return }
                    do {
                        let item = try await trash.trashItem(at: target)
                        replaced.withLock { $0 = item }
                    } catch where error.failureKind == .notFound {}
                }
            }
            if let sourceTrash {
                transfer.removeSource = { [self] path in
                    let record = try await sourceTrash.removeItemUndoably(path: path, recursive: false)
                    sourceRecord.withLock { $0 = record }
                }
            }
        }

        /// Reports the records of a finished copy or move of `job` to `target`.
        func report(job: CopyEngine.Job, mode: CopyMode, from source: TransferEndpoint, to target: TransferEndpoint,
                    existing: FileObject?, serverSideMove: Bool, preservesTimes: Bool) {
            guard let recorder else { return }
            let trashed = replaced.withLock { $0 }
            let identity = ItemIdentity(type: .file, size: job.source.size, modificationDate: preservesTimes ? job.source.modificationDate : nil)
            if serverSideMove {
                recorder.record(UndoRecord(operation: .move, path: target.path, source: job.source.path, trashName: trashed?.name,
                                           trashVolume: trashed?.volume, expected: identity), on: target.provider)
                return
            }
            if let record = sourceRecord.withLock({ $0 }) { recorder.record(record, on: source.provider) }
            let operation: UndoRecord.Operation = existing == nil ? .create : .overwrite
            recorder.record(UndoRecord(operation: operation, path: target.path, trashName: trashed?.name, trashVolume: trashed?.volume,
                                       expected: identity, isPermanent: existing != nil && trashed == nil), on: target.provider)
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
