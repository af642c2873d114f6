import GatewayCore

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

    /// Removes `path`: into the trash, recorded, with `--trash`; for good otherwise.
    func remove(_ path: String, recursive: Bool, operations: any FileProviderOperations) async throws {
        if let undo {
            undo.recorder.record(try await undo.provider.removeItemUndoably(path: path, recursive: recursive), on: provider)
        } else {
            try await operations.removeItem(path: path, recursive: recursive)
        }
    }

    /// Renames `source` to `target`: what `target` held goes to the trash first, and the move is
    /// recorded, with `--trash`.
    func rename(_ source: String, to target: String, overwrite: Bool, operations: any FileProviderOperations) async throws {
        if let undo {
            undo.recorder.record(try await undo.provider.moveItemUndoably(path: source, to: target, overwrite: overwrite), on: provider)
        } else {
            try await operations.moveItem(path: source, to: target, overwrite: overwrite)
        }
    }
}
