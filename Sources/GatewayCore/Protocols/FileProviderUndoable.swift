/// Undo: a provider whose changes can be reverted, through a trash on the remote itself.
///
/// Removals and overwrites move the previous item into the remote's ``trash`` with one server-side
/// rename (never a copy), and every undoable operation returns the ``UndoRecord`` that reverts it:
///
/// ```swift
/// if let undoable = provider as? any FileProviderUndoable {
///     let record = try await undoable.removeItemUndoably(path: "/reports", recursive: true)
///     try await undoable.undo(record)          // /reports is back
/// }
/// ```
///
/// The operations (``removeItemUndoably(path:recursive:useTrash:)``,
/// ``moveItemUndoably(path:to:overwrite:useTrash:)``, ``writeUndoably(path:from:options:existing:useTrash:)``,
/// ``copyItemUndoably(path:to:overwrite:progress:useTrash:)``, ``createFolderUndoably(path:)``) and
/// ``undo(_:)`` are written once, over the provider's ordinary operations and its ``Trash``; a
/// backend conforms by providing ``trash``. Undo refuses, with
/// ``FileProviderError/undoRefused(path:reason:)``, to touch an item that changed after the operation.
public protocol FileProviderUndoable: FileProviderOperations, FileProviderReadWrite {
    /// The remote's trash; `nil` when it is turned off (`trash: false`). Removals are then
    /// permanent (their records say so), and overwrites cannot be reverted.
    var trash: Trash? { get }
}
