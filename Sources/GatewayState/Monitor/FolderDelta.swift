public import GatewayCore
import Synchronization

/// One entry of a folder's changes since a sync token.
public enum FolderDeltaEntry: Sendable {
    /// A member that is new or changed (or, in a complete delta, any member).
    case present(FileObject)
    /// A member that is gone, by name.
    case removed(name: String)
}

/// A folder's changes since a token (WebDAV `sync-collection`, RFC 6578), streamed.
public struct FolderDelta: Sendable {
    /// The delta lists every member (asked without a token): members it does not name are gone.
    public var isComplete: Bool
    /// The entries, read while they arrive.
    public var entries: PullSequence<FolderDeltaEntry>
    /// The token for the next delta, known once ``entries`` ended.
    public var nextToken: @Sendable () -> String?
    /// Whether the server cut the answer short (RFC 6578 3.6: a `507` for the folder itself),
    /// known once ``entries`` ended. A cut delta is never complete: members it does not name stay,
    /// and the next token brings the rest.
    public var wasTruncated: @Sendable () -> Bool

    /// Creates a delta.
    public init(isComplete: Bool, entries: PullSequence<FolderDeltaEntry>, nextToken: @escaping @Sendable () -> String?,
                wasTruncated: @escaping @Sendable () -> Bool = { false }) {
        self.isComplete = isComplete
        self.entries = entries
        self.nextToken = nextToken
        self.wasTruncated = wasTruncated
    }
}

/// Thrown by ``SnapshotMonitoring/folderDelta(at:token:)`` when the server no longer knows the
/// token: the round lists the folder in full and starts a new token.
public struct FolderDeltaTokenInvalid: Error, Sendable {
    public init() {}
}

/// Where a delta-capable backend tells what it learned about the server.
public enum FolderDeltaSupport: Sendable, Hashable {
    /// Not asked yet.
    case unknown
    /// The server answers `sync-collection`.
    case supported
    /// The server refused it: rounds list folders.
    case unsupported
}
