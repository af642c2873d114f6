import Foundation
import GatewayCore

extension CopyEngine {
    /// Creates a destination folder (and its parents); `false` when it failed (reported), or when the
    /// destination cannot create folders (`target` is `nil`).
    func makeFolder(_ path: String, relative: String, on target: (any FileProviderOperations)?, state: RunState) async -> Bool {
        if options.dryRun {
            state.event(.wouldDo(action: .mkdir, path: relative))
            return true
        }
        do {
            guard let target else { throw FileProviderError.unsupported(operation: "creating folders", path: path) }
            // Recorded ahead (the folder is missing when this runs): undone after the files in it.
            let handle = options.undoRecorder?.record(UndoRecord(operation: .create, path: path, expected: ItemIdentity(type: .directory),
                                                                 isTentative: true), on: target)
            // Retried when transient: a server may answer 423 Locked to one of two MKCOLs of the
            // same folder at once (`rclone serve webdav`, when workers of a plan race).
            try await retrying(relative, state: state) { _ in
                do {
                    try await target.createFolder(path: path, withIntermediateDirectories: true)
                } catch where error.failureKind == .alreadyExists {
                    // Made meanwhile by another worker of the plan: a folder is what was wanted.
                    guard try await target.itemIfPresent(path: path)?.isDirectory == true else { throw error }
                }
            }
            if let handle { options.undoRecorder?.confirm(handle) }
            state.folderCreated(relative)
            return true
        } catch {
            state.fail(relative, operation: "mkdir", side: .destination, error: error)
            return false
        }
    }

    /// How two sides compare modification times: within the coarser side's precision, and only
    /// when times are preserved and both sides keep them (see ``CopyDecision/decide(source:destination:options:precision:comparesTimes:checksum:)``).
    func timeRules(_ source: TransferEndpoint, _ destination: TransferEndpoint) -> (precision: Duration, comparesTimes: Bool) {
        let precision = max(source.provider.capabilities.modificationTimePrecision, destination.provider.capabilities.modificationTimePrecision)
        let comparesTimes = options.preserveModificationTimes
            && destination.provider.capabilities.supports(.setModificationDate)
            && source.provider.capabilities.supports(.modificationTimes)
        return (precision, comparesTimes)
    }

    /// Decides, then copies or moves one file, retrying transient failures; a range of a split
    /// file goes to ``processRange(_:range:key:destinationPath:from:to:existing:progress:state:)``.
    func process(_ job: Job, mode: CopyMode, destinationPath: String, from source: TransferEndpoint, to destination: TransferEndpoint,
                 existing: FileObject?, progress: TransferProgress?, state: RunState) async {
        if let range = job.range {
            await processRange(job, range: range, key: job.rangeKey, destinationPath: destinationPath, from: source, to: destination,
                               existing: existing, progress: progress, state: state)
            return
        }
        let (precision, comparesTimes) = timeRules(source, destination)
        // A single-file run names its endpoints as given; a tree run names each file below them.
        let sourceFile = job.source.path == source.path ? source
            : TransferEndpoint(provider: source.provider, path: job.source.path,
                               displayName: (try? source.appending(job.relative).displayName) ?? job.relative)
        let checksum: (verdict: ChecksumVerdict?, sourceHashes: [HashAlgorithm: String])
        do {
            checksum = try await compareChecksums(job.source, on: sourceFile, with: existing, on: destination)
        } catch {
            progress?.addFile()
            state.fail(job.relative, operation: "checksum", item: sourceFile.displayName, error: error)
            return
        }
        let decision = CopyDecision.decide(source: job.source, destination: existing, options: options,
                                           precision: precision, comparesTimes: comparesTimes, checksum: checksum.verdict)
        let target = destinationPath == destination.path ? destination
            : TransferEndpoint(provider: destination.provider, path: destinationPath,
                               displayName: (try? destination.appending(job.relative).displayName) ?? job.relative)
        if case .skip(let reason) = decision {
            progress?.addFile()
            progress?.addBytes(job.source.size ?? 0)
            state.skipped(job.relative, reason: reason)
            // A move removes the source only when the destination already holds the same file; a
            // file kept by --ignore-existing or --update may differ, and its source stays.
            if mode == .move, reason.isUnchanged { await removeSource(sourceFile, relative: job.relative, state: state) }
            return
        }
        if options.dryRun {
            state.planned(job.relative, action: mode == .move ? .move : .copy, bytes: job.source.size ?? 0)
            return
        }
        progress?.setCurrentItem(job.relative)
        var transferOptions = TransferOptions(overwrite: true, preserveModificationTimes: options.preserveModificationTimes,
                                              sourceHashes: checksum.sourceHashes)
        transferOptions.multiThreadStreams = options.multiThreadStreams
        transferOptions.multiThreadCutoff = options.multiThreadCutoff
        let serverSideMove = mode == .move && sourceFile.isSameProvider(as: target) && source.provider.capabilities.supports(.serverSideMove)
        let undo = FileUndo(options: options, mode: mode, job: job, source: sourceFile, target: target, existing: existing,
                            serverSideMove: serverSideMove)
        undo.begin(&transferOptions, source: sourceFile, existing: existing, serverSideMove: serverSideMove)
        do {
            try await retrying(job.relative, state: state, progress: progress, bytes: job.source.size) { attempt in
                if mode == .move {
                    try await Transfer.moveFile(from: sourceFile, to: target, options: transferOptions, progress: attempt,
                                                sourceAttributes: job.source)
                } else {
                    try await Transfer.copyFile(from: sourceFile, to: target, options: transferOptions, progress: attempt,
                                                sourceAttributes: job.source)
                }
            }
            progress?.addFile()
            undo.finish(existing: existing, serverSideMove: serverSideMove, source: sourceFile)
            state.copied(job.relative, bytes: job.source.size ?? 0)
        } catch where job.source.isSymbolicLink && error.failureKind == .isADirectory {
            progress?.addFile()
            state.skipped(job.relative, reason: .symbolicLinkToFolder)
        } catch {
            await undo.failed()
            let side = ErrorMessage.path(of: error).map { RemotePath.parent(of: $0) == RemotePath.parent(of: destinationPath) || $0 == destinationPath } == true
                && ErrorMessage.path(of: error) != job.source.path
            state.fail(job.relative, operation: mode == .move ? "move" : "copy",
                       item: side ? target.displayName : sourceFile.displayName, error: error)
        }
    }

    /// Removes a moved file's source (after its copy was verified, or found identical).
    func removeSource(_ source: TransferEndpoint, relative: String, state: RunState) async {
        guard !options.dryRun else {
            state.event(.wouldDo(action: .deleteSource, path: relative))
            return
        }
        guard let remover = source.provider as? any FileProviderOperations else { return }
        do {
            if let undoable = remover as? any FileProviderUndoable {
                let record = try await undoable.removeItemUndoably(path: source.path, recursive: false, useTrash: options.useTrash)
                options.undoRecorder?.record(record, on: remover)
            } else {
                try await remover.removeItem(path: source.path, recursive: false)
            }
        } catch {
            state.fail(relative, operation: "remove source", error: error)
        }
    }
}
