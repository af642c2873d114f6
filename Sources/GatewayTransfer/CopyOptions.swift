public import GatewayCore

/// What a copy engine run does with a tree.
public enum CopyMode: String, Sendable, Hashable {
    /// Copy new and changed files; never delete anything at the destination.
    case copy
    /// Copy, then remove each source file once its copy is verified (or already identical).
    case move
    /// Make the destination match the source: copy, then delete extras at the destination, but only
    /// if every copy succeeded.
    case sync
}

/// How a copy engine run behaves.
public struct CopyOptions: Sendable {
    /// Files transferred at once.
    public var transfers: Int
    /// Files compared (destination looked up) at once.
    public var checkers: Int
    /// Skip files that exist at the destination, whatever they hold.
    public var ignoreExisting: Bool
    /// Skip files whose destination copy is newer.
    public var update: Bool
    /// Compare by size only (when neither times nor hashes can be trusted).
    public var sizeOnly: Bool
    /// Compare files of the same size by content hash instead of modification time, where both
    /// sides answer for a common algorithm (``ProviderCapabilities/hashAlgorithms``); where they
    /// share none, or a file has no stored hash, by size only.
    public var checksum: Bool = false
    /// Ranged streams a large file moves in at once, from a source that reads ranges into a
    /// destination that writes pieces (Local) or takes ranged uploads (WebDAV); 1 turns it off.
    public var multiThreadStreams: Int = 4
    /// Files smaller than this are copied in one stream.
    public var multiThreadCutoff: Int64 = 256 << 20
    /// Report what would happen; change nothing.
    public var dryRun: Bool
    /// Attempts per file when a transient error (time-out, dropped connection, 5xx, 429) happens.
    public var retries: Int
    /// First pause between attempts; doubled each time, with jitter, capped at ``maxRetryDelay``.
    public var retryDelay: Duration
    /// Longest pause between attempts (a server's `Retry-After` may ask for longer, up to a minute).
    public var maxRetryDelay: Duration
    /// Give copies the source's modification time where the destination can set it.
    public var preserveModificationTimes: Bool
    /// Send what a sync deletes and the files a copy replaces to the destination's trash, and a
    /// moved file's source to the source's trash, where the remote has one (``FileProviderUndoable``
    /// with a ``Trash``): one rename each. Off (`--no-trash`), they are removed for good.
    public var useTrash: Bool = true
    /// Only the files whose path falls into this shard (`--hash-shard K/N`): copied, checked, and
    /// (sync) deleted as extras. Every worker still lists the whole source and makes every folder.
    public var hashShard: HashShard?
    /// Receives an ``UndoRecord`` for every change the run makes (the CLI's undo journal).
    public var undoRecorder: (any UndoRecorder)?

    /// Creates options with rclone-like defaults: 4 transfers, 8 checkers, 3 attempts.
    public init(transfers: Int = 4, checkers: Int = 8, ignoreExisting: Bool = false, update: Bool = false, sizeOnly: Bool = false,
                dryRun: Bool = false, retries: Int = 3, retryDelay: Duration = .milliseconds(200), maxRetryDelay: Duration = .seconds(10),
                preserveModificationTimes: Bool = true) {
        self.transfers = max(1, transfers)
        self.checkers = max(1, checkers)
        self.ignoreExisting = ignoreExisting
        self.update = update
        self.sizeOnly = sizeOnly
        self.dryRun = dryRun
        self.retries = max(1, retries)
        self.retryDelay = retryDelay
        self.maxRetryDelay = maxRetryDelay
        self.preserveModificationTimes = preserveModificationTimes
    }
}
