/// A record of a finished change that a provider knows how to revert.
public struct UndoRecord: Sendable, Hashable {
    /// The kind of operation the record reverts.
    public enum Operation: String, Sendable, Hashable {
        case create, move, copy, remove, write
    }

    /// The operation that was done.
    public var operation: Operation
    /// The item it was done to.
    public var path: String
    /// For moves and copies, the other path involved.
    public var destination: String?
    /// Backend data needed to revert (e.g. the name of a trash entry or a previous version).
    public var token: String?

    /// Creates a record.
    public init(operation: Operation, path: String, destination: String? = nil, token: String? = nil) {
        self.operation = operation
        self.path = path
        self.destination = destination
        self.token = token
    }
}

/// Undo: a provider that can revert some of its own operations (moves back, removals out of a
/// trash, writes to a previous version).
///
/// Implementations arrive with a later issue; the protocol is declared now.
public protocol FileProviderUndoable: FileProviderOperations {
    /// Whether operations of this kind can be reverted on this remote.
    func canUndo(_ operation: UndoRecord.Operation) -> Bool
    /// Reverts a finished operation.
    func undo(_ record: UndoRecord) async throws
}
