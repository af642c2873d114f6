/// Receives the ``UndoRecord`` of each change a long operation makes (the copy engine's copies,
/// overwrites and deletions), as soon as it is made: the CLI writes them to its undo journal.
///
/// A record marked ``UndoRecord/isTentative`` is written just before its change; once the change
/// is made it is confirmed (``confirm(_:)``). Undo leaves alone what an unconfirmed record names
/// when it finds something else there (the change never happened), but refuses, as for any record,
/// to touch a confirmed change that was altered since.
public protocol UndoRecorder: Sendable {
    /// One change was made on `provider` (or, for a tentative record, is about to be). Returns a
    /// handle to confirm a tentative record with, or `nil`.
    @discardableResult
    func record(_ record: UndoRecord, on provider: any FileProviderBasic) -> UndoRecordHandle?

    /// The change of the tentative record behind `handle` was made.
    func confirm(_ handle: UndoRecordHandle)
}

extension UndoRecorder {
    /// Recorders that keep records in memory need no confirmation step.
    public func confirm(_ handle: UndoRecordHandle) {}
}

/// Identifies one record a recorder kept (the journal's run and sequence number).
public struct UndoRecordHandle: Sendable, Hashable {
    /// The recorder's own numbers.
    public var run: Int64
    public var sequence: Int64

    /// Creates a handle.
    public init(run: Int64, sequence: Int64) {
        self.run = run
        self.sequence = sequence
    }
}
