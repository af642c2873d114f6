
/// Why a file needed no copy, or was left out.
public enum SkipReason: Sendable, Hashable, CustomStringConvertible {
    /// On what grounds two files were found the same.
    public enum Basis: Sendable, Hashable {
        /// The same size and modification time (within the remotes' precision).
        case sizeAndTime
        /// The same size (`--size-only`, or a side without times).
        case size
        /// The same size, and the source not modified since the destination's copy was written
        /// (a destination that cannot keep times).
        case notModifiedSinceCopied
        /// The same content hash (`--checksum`).
        case checksum
        /// The same size, with no hash on a side to compare (`--checksum`).
        case sizeWithoutChecksum
    }

    /// The destination holds the same file.
    case unchanged(Basis)
    /// The destination has the file and `--ignore-existing` keeps it.
    case exists
    /// The destination's file is newer and `--update` keeps it.
    case newerAtDestination
    /// A symbolic link to a folder, which is not followed.
    case symbolicLinkToFolder
    /// Neither a regular file nor a folder (a device, socket or FIFO).
    case notARegularFile

    /// The destination holds the same file (a move may then remove the source).
    public var isUnchanged: Bool {
        if case .unchanged = self { return true }
        return false
    }

    /// The item was left out rather than found up to date: worth telling without `--verbose`.
    public var leavesItemOut: Bool { self == .symbolicLinkToFolder || self == .notARegularFile }

    public var description: String {
        switch self {
        case .unchanged(.sizeAndTime): return "unchanged"
        case .unchanged(.size): return "unchanged (same size)"
        case .unchanged(.notModifiedSinceCopied): return "unchanged (same size, not modified since it was copied)"
        case .unchanged(.checksum): return "unchanged (same checksum)"
        case .unchanged(.sizeWithoutChecksum): return "unchanged (same size; no checksum to compare)"
        case .exists: return "exists"
        case .newerAtDestination: return "newer at destination"
        case .symbolicLinkToFolder: return "symbolic link to a folder is not followed"
        case .notARegularFile: return "not a regular file"
        }
    }
}

/// What a dry run would have done.
public enum PlannedAction: String, Sendable, Hashable {
    case copy, move, delete, mkdir
    /// A move's removal of a source that the destination already holds.
    case deleteSource = "delete source"

    /// Whether the action happens at the destination (else at the source).
    public var isAtDestination: Bool { self == .delete || self == .mkdir }
}

/// Which side of a run an item or a failure belongs to.
public enum CopySide: Sendable, Hashable {
    case source, destination
}

/// Something a copy engine run did or decided, in the order it happened.
public enum CopyEvent: Sendable {
    /// A file was copied (or moved): its path relative to the run's root and its size.
    case copied(path: String, bytes: Int64)
    /// A file needed no copy (or was left out), and why.
    case skipped(path: String, reason: SkipReason)
    /// A folder was created at the destination.
    case createdFolder(path: String)
    /// An extra item was deleted from the destination (sync).
    case deleted(path: String)
    /// In a dry run: what would have been done.
    case wouldDo(action: PlannedAction, path: String)
    /// An attempt failed with a transient error and will be retried after `delay`.
    case retrying(path: String, attempt: Int, delay: Duration, error: String)
    /// A file or folder failed for good: `operation` names what was tried (`copy`, `delete`,
    /// `mkdir`...), `side` where; `item` names the failed item as `remote:path` when the engine
    /// knows it, else it equals `path` (relative to that side's root).
    case failed(path: String, operation: String, side: CopySide, item: String, error: any Error)
    /// A note for the operator (for example why sync deleted nothing).
    case notice(String)
    /// A detail worth a line in a verbose log (for example that a server's listings leave out
    /// dot files, so they are looked up one by one).
    case detail(String)
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
    /// A plan's chunk: the ranges of split files it wrote, or found unneeded (in the order done).
    public var ranges: [RangeOutcome] = []

    /// Creates an empty summary.
    public init() {}

    /// `true` when nothing failed.
    public var succeeded: Bool { failed == 0 }

    /// Adds the counts of another run (a plan's chunks, merged); the wall time stays.
    public mutating func add(_ other: CopySummary) {
        copied += other.copied
        skipped += other.skipped
        failed += other.failed
        deleted += other.deleted
        foldersCreated += other.foldersCreated
        bytes = bytes.saturatingAdding(other.bytes)
        ranges += other.ranges
    }
}

/// What a plan's chunk did with one range of a split file (``TransferPlan/SplitFile``): wrote it
/// into the file's partial file, or left it because the destination already held the file.
public struct RangeOutcome: Sendable, Hashable, Codable {
    /// The file's path relative to the plan's source.
    public var path: String
    /// Where the range starts.
    public var offset: Int64
    /// `true` when its bytes are in the partial file; `false` when the file needed no copy.
    public var written: Bool

    /// An outcome.
    public init(path: String, offset: Int64, written: Bool) {
        self.path = path
        self.offset = offset
        self.written = written
    }
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
    /// Details worth a line in a verbose log (for example that a server's listings leave out dot
    /// files, so they were looked up one by one).
    public var details: [String] = []

    /// Creates an empty report.
    public init() {}

    /// `true` when both sides hold the same files and nothing failed.
    public var isIdentical: Bool { missing.isEmpty && extra.isEmpty && different.isEmpty && errors.isEmpty }
}
