import Foundation
import GatewayCore
import GatewayState
import Logging

/// Applies the folder changes a mount made offline (``ChangeJournal``) to the remote, in order,
/// never losing what the remote did meanwhile: an item removed offline that was changed on the
/// remote stays (its new version), a folder removed offline that the remote added to stays, a
/// rename whose folder the remote removed recreates the folder, and what can't be applied at all
/// is logged and given up. Runs when the remote answers again, and at the start of the next
/// mount with the cache folder (after a crash), always before the uploads owed.
struct ChangeReplay: Sendable {
    let journal: ChangeJournal
    let provider: any FileProviderReadWrite
    let undo: MountUndo?
    let logger: Logger

    /// Applies every change; `false` when the remote stopped answering (the rest waits).
    func run() async -> Bool {
        guard let operations = provider as? any FileProviderOperations else { return true }
        // Changes made while these are applied come in the next batch.
        while true {
            let changes: [ChangeJournal.Change]
            do {
                changes = try journal.changes()
            } catch {
                logger.warning("the changes made offline could not be read from the state store", metadata: ["error": .string("\(error)")])
                return true
            }
            if changes.isEmpty { return true }
            logger.info("applying \(changes.count) change(s) made while the remote did not answer")
            guard await apply(changes, operations: operations) else { return false }
        }
    }

    private func apply(_ changes: [ChangeJournal.Change], operations: any FileProviderOperations) async -> Bool {
        for change in changes {
            do {
                try await apply(change, operations: operations)
            } catch where Connectivity.isUnreachable(error) {
                return false
            } catch {
                logger.warning("a change made offline could not be applied; given up", metadata: [
                    "change": .string(change.kind.rawValue), "path": .string(change.path), "error": .string("\(error)"),
                ])
            }
            do {
                try journal.remove(change.sequence)
            } catch {
                logger.warning("an applied change stays in the state store", metadata: ["error": .string("\(error)")])
            }
        }
        return true
    }

    private func apply(_ change: ChangeJournal.Change, operations: any FileProviderOperations) async throws {
        switch change.kind {
        case .createFolder:
            if let existing = try await provider.itemIfPresent(path: change.path), existing.isDirectory { return }
            try await operations.createFolder(path: change.path, withIntermediateDirectories: true)
            undo?.recorder.record(UndoRecord(operation: .create, path: change.path, expected: ItemIdentity(type: .directory)), on: provider)
        case .remove:
            guard let item = try await provider.itemIfPresent(path: change.path) else { return }
            if !change.isFolder, let version = change.version, Self.changedRemotely(item, since: version) {
                logger.warning("removed through the mount while offline and changed on the remote meanwhile: the remote's version is kept",
                               metadata: ["path": .string(change.path)])
                return
            }
            do {
                try await remove(change.path, operations: operations)
            } catch where error.failureKind == .directoryNotEmpty || error.failureKind == .conflict {
                logger.warning("a folder removed through the mount while offline has new items on the remote: it is kept",
                               metadata: ["path": .string(change.path)])
            }
        case .rename:
            guard let target = change.target else { return }
            guard try await provider.itemIfPresent(path: change.path) != nil else {
                logger.warning("renamed through the mount while offline, but removed on the remote meanwhile",
                               metadata: ["path": .string(change.path), "to": .string(target)])
                return
            }
            // The target's folder may have gone from the remote meanwhile: it is made again.
            let parent = (target as NSString).deletingLastPathComponent
            if try await provider.itemIfPresent(path: parent) == nil {
                try await operations.createFolder(path: parent, withIntermediateDirectories: true)
            }
            if let undo {
                undo.recorder.record(try await undo.provider.moveItemUndoably(path: change.path, to: target, overwrite: true), on: provider)
            } else {
                try await operations.moveItem(path: change.path, to: target, overwrite: true)
            }
        }
    }

    /// Whether the remote's `item` is at another version than `version`, the one the mount knew
    /// (an item without a version tag counts as changed: nothing says it is the same).
    static func changedRemotely(_ item: FileObject, since version: String) -> Bool {
        item.versionTag.map { VersionTag.same($0, version) } != true
    }

    private func remove(_ path: String, operations: any FileProviderOperations) async throws {
        if let undo {
            undo.recorder.record(try await undo.provider.removeItemUndoably(path: path, recursive: false), on: provider)
        } else {
            try await operations.removeItem(path: path, recursive: false)
        }
    }
}
