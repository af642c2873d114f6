
/// Something a copy engine run did or decided, in the order it happened.
public enum CopyEvent: Sendable {
    /// A file was copied (or moved): its path relative to the run's root and its size.
    case copied(path: String, bytes: Int64)
    /// A file needed no copy, and why (`unchanged`, `exists`, `newer at destination`).
    case skipped(path: String, reason: String)
    /// A folder was created at the destination.
    case createdFolder(path: String)
    /// An extra item was deleted from the destination (sync).
    case deleted(path: String)
    /// In a dry run: what would have been done (`copy`, `delete`, `mkdir`).
    case wouldDo(action: String, path: String)
    /// An attempt failed with a transient error and will be retried after `delay`.
    case retrying(path: String, attempt: Int, delay: Duration, error: String)
    /// A file or folder failed for good. `item` names the side that failed as `remote:path` (the
    /// destination when the error is about it, else the source).
    case failed(path: String, operation: String, item: String, error: any Error)
    /// A note for the operator (for example why sync deleted nothing).
    case notice(String)
}

/// The outcome of a copy engine run.
public struct CopySummary: Sendable {
    /// Files copied (or moved); in a dry run, the copies planned.
    public var copied = 0
    /// Files that needed no copy.
    public var skipped = 0
    /// Items that failed.
    public var failed = 0
    /// Extra items deleted from the destination (sync); in a dry run, the deletions planned.
    public var deleted = 0
    /// Folders created.
    public var foldersCreated = 0
    /// Bytes copied.
    public var bytes: Int64 = 0
    /// Wall time of the run.
    public var elapsed: Duration = .zero
    /// The run was a dry run: nothing changed.
    public var dryRun = false

    /// Creates an empty summary.
    public init() {}

    /// `true` when nothing failed.
    public var succeeded: Bool { failed == 0 }
}

/// What `check` found.
public struct CheckReport: Sendable {
    /// Files in the source but not at the destination (relative paths).
    public var missing: [String] = []
    /// Files at the destination but not in the source.
    public var extra: [String] = []
    /// Files on both sides that differ (size, or time when asked).
    public var different: [String] = []
    /// Files that match.
    public var matching = 0
    /// Items that could not be compared.
    public var errors: [String] = []
    /// Notes for the operator (for example that no hash could be compared).
    public var notices: [String] = []

    /// Creates an empty report.
    public init() {}

    /// `true` when both sides hold the same files and nothing failed.
    public var isIdentical: Bool { missing.isEmpty && extra.isEmpty && different.isEmpty && errors.isEmpty }
}
