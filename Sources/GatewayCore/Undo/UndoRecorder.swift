/// Receives the ``UndoRecord`` of each change a long operation makes (the copy engine's copies,
/// overwrites and deletions), as soon as it is made: the CLI writes them to its undo journal.
public protocol UndoRecorder: Sendable {
    /// One change was made on `provider`.
    func record(_ record: UndoRecord, on provider: any FileProviderBasic)
}
