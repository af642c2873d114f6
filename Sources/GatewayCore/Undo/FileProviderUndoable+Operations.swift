import Foundation
import Synchronization

extension FileProviderUndoable {
    /// Removes an item into the trash (one rename, whatever the folder holds) and returns the record
    /// that brings it back. Without a trash, or with `useTrash: false`, the removal is permanent
    /// and the record says so.
    public func removeItemUndoably(path: String, recursive: Bool, useTrash: Bool = true) async throws -> UndoRecord {
        let remote = try RemotePath.normalize(path)
        guard useTrash, let trash else {
            try await removeItem(path: remote, recursive: recursive)
            return UndoRecord(operation: .remove, path: remote, isPermanent: true)
        }
        if !recursive, try await attributesOfItem(path: remote).isDirectory {
            var entries = contentsOfDirectory(path: remote, pageSize: 1).entries.makeAsyncIterator()
            if try await entries.next() != nil { throw CocoaError.posix(ENOTEMPTY, path: remote, remote: name, writing: true) }
        }
        let trashed = try await trash.trashItem(at: remote)
        return UndoRecord(operation: .remove, path: remote, trashName: trashed.name, trashVolume: trashed.volume)
    }

    /// Moves an item; what stood at the destination (with `overwrite`) goes to the trash first.
    public func moveItemUndoably(path: String, to destination: String, overwrite: Bool, useTrash: Bool = true) async throws -> UndoRecord {
        let source = try RemotePath.normalize(path)
        let target = try RemotePath.normalize(destination)
        guard source != target else {
            throw FileProviderError.invalidPath(path: target, reason: "an item cannot be moved onto itself")
        }
        let replaced = overwrite && useTrash ? try await trashIfPresent(target) : nil
        do {
            try await moveItem(path: source, to: target, overwrite: overwrite && replaced == nil)
        } catch {
            if let replaced { try? await trash?.restore(replaced, to: target) }
            throw error
        }
        // The record even when the moved item cannot be described (it then matches by type alone).
        let moved = try? await attributesOfItem(path: target)
        return UndoRecord(operation: .move, path: target, source: source, trashName: replaced?.name, trashVolume: replaced?.volume,
                          expected: moved.map(ItemIdentity.init))
    }

    /// Copies an item on this remote. What stood at the destination (with `overwrite`) goes to the
    /// trash once the copy is complete: the copy is made under a temporary name first, then the old
    /// item is trashed and the copy renamed into place, so the name is never empty for long.
    public func copyItemUndoably(path: String, to destination: String, overwrite: Bool, progress: TransferProgress? = nil,
                                 useTrash: Bool = true) async throws -> UndoRecord {
        let target = try RemotePath.normalize(destination)
        let existed = overwrite ? try await itemIfPresent(path: target) != nil : false
        guard existed, useTrash, let trash else {
            try await copyItem(path: path, to: target, overwrite: overwrite, progress: progress)
            let copied = try await attributesOfItem(path: target)
            // Replaced without a trash: the record says the old item is gone for good.
            return UndoRecord(operation: existed ? .overwrite : .create, path: target, expected: ItemIdentity(copied), isPermanent: existed)
        }
        let temporary = RemotePath.temporaryPath(for: target)
        var replaced: TrashedItem?
        do {
            try await copyItem(path: path, to: temporary, overwrite: false, progress: progress)
            replaced = try await trash.trashItem(at: target)
            try await moveItem(path: temporary, to: target, overwrite: true)
        } catch {
            try? await removeItem(path: temporary, recursive: true)
            if let replaced, (try? await itemIfPresent(path: target)) == .some(nil) { try? await trash.restore(replaced, to: target) }
            throw error
        }
        let copied = try await attributesOfItem(path: target)
        return UndoRecord(operation: .overwrite, path: target, trashName: replaced?.name, trashVolume: replaced?.volume,
                          expected: ItemIdentity(copied))
    }

    /// Creates a folder and any missing parents; one record per folder made, outermost first (none
    /// when the folder existed already). Undone in reverse order, innermost first.
    public func createFolderUndoably(path: String) async throws -> [UndoRecord] {
        let remote = try RemotePath.normalize(path)
        var missing: [String] = []
        var probe = remote
        while probe != "/", try await itemIfPresent(path: probe) == nil {
            missing.append(probe)
            probe = RemotePath.parent(of: probe)
        }
        try await createFolder(path: remote, withIntermediateDirectories: true)
        return missing.reversed().map { UndoRecord(operation: .create, path: $0, expected: ItemIdentity(type: .directory)) }
    }

    /// Writes a file atomically; an existing file is moved into the trash in the instant before the
    /// new one is renamed into place (``WriteOptions/beforeReplacing``), so the name is never empty.
    ///
    /// - Parameters:
    ///   - path: the file to write.
    ///   - stream: its new content.
    ///   - options: as for ``FileProviderReadWrite/write(path:from:options:)``; the write is made atomic.
    ///   - existing: whether the caller knows a file is there (`nil`: look it up). Saves the trash
    ///     a failed rename for a new file.
    ///   - useTrash: `false` replaces for good (`--no-trash`); the record then cannot restore it.
    /// - Returns: the written file and the record that reverts the write (``UndoRecord/Operation/overwrite``
    ///   puts the previous file back, ``UndoRecord/Operation/create`` trashes the new one).
    public func writeUndoably(path: String, from stream: ByteStream, options: WriteOptions, existing: Bool? = nil,
                              useTrash: Bool = true) async throws -> (file: FileObject, record: UndoRecord) {
        let remote = try RemotePath.normalize(path)
        var options = options
        let replaced = Mutex<TrashedItem?>(nil)
        if useTrash, let trash, options.overwrite {
            let present: Bool
            if let existing { present = existing } else { present = try await itemIfPresent(path: remote) != nil }
            if present {
                options.atomically = true
                options.beforeReplacing = { target in
                    do {
                        let trashed = try await trash.trashItem(at: target)
                        replaced.withLock { $0 = trashed }
                    } catch where error.failureKind == .notFound {}
                }
            }
        }
        let file: FileObject
        do {
            file = try await write(path: remote, from: stream, options: options)
        } catch {
            // Trashed, then the rename into place failed: put the previous file back.
            if let trashed = replaced.withLock({ $0 }), let trash, (try? await itemIfPresent(path: remote)) == .some(nil) {
                try? await trash.restore(trashed, to: remote)
            }
            throw error
        }
        let trashed = replaced.withLock { $0 }
        var identity = ItemIdentity(file)
        if identity.versionTag == nil || identity.modificationDate == nil, let stored = try? await attributesOfItem(path: remote) {
            identity = ItemIdentity(stored)
        }
        let record = UndoRecord(operation: trashed == nil ? .create : .overwrite, path: remote, trashName: trashed?.name,
                                trashVolume: trashed?.volume, expected: identity)
        return (file, record)
    }

    /// Reverts one change. Refuses, with ``FileProviderError/undoRefused(path:reason:)`` and
    /// changing nothing, when the item changed after the operation or its old place is taken.
    public func undo(_ record: UndoRecord) async throws {
        let path = try RemotePath.normalize(record.path)
        if record.isTentative {
            // Recorded ahead of a change that may not have happened (the run was killed, or the
            // change failed and was taken back). Nothing at `path`: only an old file already in
            // the trash has to come back. Something else at `path`: not this run's; left alone.
            guard let present = try await itemIfPresent(path: path) else {
                if record.operation == .overwrite || record.operation == .move, record.trashName != nil {
                    try await restore(record, to: path)
                }
                return
            }
            if let expected = record.expected, !expected.matches(present, tolerance: timeTolerance) { return }
        }
        switch record.operation {
        case .remove:
            guard !record.isPermanent, record.trashName != nil else {
                throw FileProviderError.undoRefused(path: path, reason: "\(path) was removed permanently (without the trash)")
            }
            try await requireAbsent(path)
            try await restore(record, to: path)
        case .overwrite:
            guard record.trashName != nil, let trash else {
                throw FileProviderError.undoRefused(path: path, reason: "the previous content of \(path) was not kept")
            }
            try await requireUnchanged(path, record.expected)
            // The newer content goes to the trash too: undo loses nothing either.
            let newer = try await trash.trashItem(at: path)
            do {
                try await restore(record, to: path)
            } catch {
                try? await trash.restore(newer, to: path)
                throw error
            }
        case .move:
            guard let source = record.source else {
                throw FileProviderError.undoRefused(path: path, reason: "the record does not say where \(path) came from")
            }
            let original = try RemotePath.normalize(source)
            try await requireUnchanged(path, record.expected)
            try await requireAbsent(original)
            try await createParent(of: original)
            try await moveItem(path: path, to: original, overwrite: false)
            if record.trashName != nil { try await restore(record, to: path) }
        case .create:
            let item = try await requireUnchanged(path, record.expected)
            if item.isDirectory {
                var entries = contentsOfDirectory(path: path, pageSize: 1).entries.makeAsyncIterator()
                if try await entries.next() != nil {
                    throw FileProviderError.undoRefused(path: path, reason: "folder \(path) holds items made after it")
                }
            }
            if let trash {
                try await trash.trashItem(at: path)
            } else if item.isDirectory {
                try await removeItem(path: path, recursive: false)  // empty: nothing is lost
            } else {
                // Undo never deletes a file for good: without a trash, the file stays.
                throw FileProviderError.undoRefused(path: path, reason: "this remote has no trash (trash: false) to move \(path) to; remove it yourself")
            }
        }
    }

    // MARK: Helpers

    /// How far two modification times of one state may differ here: the remote's time precision
    /// (a FAT volume keeps two seconds), at least a second.
    private var timeTolerance: Double {
        let precision = capabilities.modificationTimePrecision
        return max(1, precision.inSeconds)
    }

    /// Moves what is at `path` into the trash; `nil` when nothing is there or there is no trash.
    private func trashIfPresent(_ path: String) async throws -> TrashedItem? {
        guard let trash, try await itemIfPresent(path: path) != nil else { return nil }
        do {
            return try await trash.trashItem(at: path)
        } catch where error.failureKind == .notFound {
            return nil
        }
    }

    /// Puts the record's trashed item at `path`, making missing parent folders (looked for only
    /// when the rename fails: one request in the usual case).
    private func restore(_ record: UndoRecord, to path: String) async throws {
        guard let trash, let name = record.trashName else {
            throw FileProviderError.undoRefused(path: path, reason: "this remote has no trash (trash: false)")
        }
        let item = TrashedItem(name: name, volume: record.trashVolume ?? "", originalPath: path, recordedPath: path, deletionDate: nil)
        do {
            try await trash.restore(item, to: path)
        } catch where [.notFound, .conflict].contains(error.failureKind) {
            let parent = RemotePath.parent(of: path)
            if parent != "/", try await itemIfPresent(path: parent) == nil {
                try await createFolder(path: parent, withIntermediateDirectories: true)
                try await trash.restore(item, to: path)
                return
            }
            if try await itemIfPresent(path: path) == nil {
                throw FileProviderError.undoRefused(path: path, reason: "\(name) is no longer in the trash")
            }
            throw error
        }
    }

    private func createParent(of path: String) async throws {
        let parent = RemotePath.parent(of: path)
        if parent != "/", try await itemIfPresent(path: parent) == nil {
            try await createFolder(path: parent, withIntermediateDirectories: true)
        }
    }

    private func requireAbsent(_ path: String) async throws {
        if try await itemIfPresent(path: path) != nil {
            throw FileProviderError.undoRefused(path: path, reason: "\(path) exists again; move it away and retry")
        }
    }

    @discardableResult
    private func requireUnchanged(_ path: String, _ expected: ItemIdentity?) async throws -> FileObject {
        guard let item = try await itemIfPresent(path: path) else {
            throw FileProviderError.undoRefused(path: path, reason: "\(path) is gone")
        }
        if let expected, !expected.matches(item, tolerance: timeTolerance) {
            throw FileProviderError.undoRefused(path: path, reason: "\(path) changed after the operation")
        }
        return item
    }
}
