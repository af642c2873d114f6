public import Foundation

/// A change seen on a remote.
public struct FileChangeEvent: Sendable, Hashable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// The item appeared.
        case created
        /// The item's content or attributes changed (size, modification time or version tag).
        case modified
        /// The item is gone. For a folder, everything under it is gone too (no event per member).
        case removed
        /// The item moved from ``FileChangeEvent/previousPath`` to ``FileChangeEvent/path``. For a
        /// folder, everything under it moved with it (no event per member).
        case renamed
    }

    /// What happened.
    public var kind: Kind
    /// The item's remote path after the change (for a removal: where it was).
    public var path: String
    /// For ``Kind/renamed``, the remote path before the change.
    public var previousPath: String?
    /// The item as it is now; for ``Kind/removed``, as it was last seen (its type, size and time).
    /// `nil` where the backend knows nothing more than the path.
    public var item: FileObject?

    /// Creates an event.
    public init(kind: Kind, path: String, previousPath: String? = nil, item: FileObject? = nil) {
        self.kind = kind
        self.path = path
        self.previousPath = previousPath
        self.item = item
    }
}

/// An opaque position in a folder's history of changes: hand it back to
/// ``FileProviderMonitor/changes(since:pageSize:)`` to learn what changed after it.
///
/// Anchors are `Codable` and survive a process restart; store them as they are (their content is
/// the provider's business and may change between releases, in which case the provider answers
/// ``FileProviderError/anchorExpired(path:reason:)``).
public struct SyncAnchor: Sendable, Hashable, Codable {
    /// The provider's encoding of the position.
    public let rawValue: Data

    /// Wraps a provider's encoding.
    public init(rawValue: Data) {
        self.rawValue = rawValue
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Data.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// One page of changes since an anchor.
public struct ChangePage: Sendable {
    /// The changes, oldest first.
    public var events: [FileChangeEvent]
    /// Where this page ends: pass it to the next call.
    public var anchor: SyncAnchor
    /// More changes are already known: ask again at once with ``anchor`` (a caller that applies
    /// changes should do so before showing a consistent state).
    public var moreComing: Bool

    /// Creates a page.
    public init(events: [FileChangeEvent], anchor: SyncAnchor, moreComing: Bool) {
        self.events = events
        self.anchor = anchor
        self.moreComing = moreComing
    }
}

/// How a live stream of changes watches a folder.
public struct MonitorOptions: Sendable, Hashable {
    /// Watch the whole tree under the folder, not only its direct members.
    public var recursive: Bool
    /// Time between two polling rounds, for backends that must poll (WebDAV, FTP); ignored where the
    /// backend pushes events (Local, through inotify).
    public var interval: Duration

    /// Creates options.
    public init(recursive: Bool = true, interval: Duration = .seconds(10)) {
        self.recursive = recursive
        self.interval = interval
    }
}

/// Change monitoring: what changed under a folder, live and since a durable ``SyncAnchor``.
///
/// Local folders push changes through inotify; WebDAV and FTP remotes are polled (one listing per
/// folder per round, compared with a snapshot kept in the local state store). Anchors work on
/// every backend: a caller that was offline asks for the changes since the anchor it saved, in
/// pages, then goes on live:
///
/// ```swift
/// if let monitor = provider as? any FileProviderMonitor {
///     var anchor = try await monitor.currentAnchor(at: "/inbox", recursive: true)
///     // ... later, maybe in another process:
///     var page: ChangePage
///     repeat {
///         page = try await monitor.changes(since: anchor, pageSize: 500)
///         for event in page.events { print(event.kind, event.path) }
///         anchor = page.anchor
///     } while page.moreComing
/// }
/// ```
public protocol FileProviderMonitor: FileProviderBasic {
    /// Whether changes are pushed by the backend (no polling interval applies).
    var pushesChanges: Bool { get }

    /// Streams changes under `path` as they are seen, until the consumer stops iterating or the
    /// task is cancelled. Changes from before the call are not reported.
    func changes(at path: String, options: MonitorOptions) -> PullSequence<FileChangeEvent>

    /// The current position of the folder's history. The first call for a folder records its
    /// state (a full listing) and reports nothing for it.
    func currentAnchor(at path: String, recursive: Bool) async throws -> SyncAnchor

    /// The changes after `anchor`, at most `pageSize` per page, oldest first.
    ///
    /// - Throws: ``FileProviderError/anchorExpired(path:reason:)`` when the anchor can no longer be
    ///   served (state lost, history pruned, another remote's anchor): start over with a full listing
    ///   and ``currentAnchor(at:recursive:)``.
    func changes(since anchor: SyncAnchor, pageSize: Int) async throws -> ChangePage

    /// Catch-up, then live: first every change since `anchor`, page by page (the last catch-up page
    /// has `moreComing == false`, even when empty), then a page whenever changes are seen. Each
    /// page's anchor is the one to save: a consumer that stops anywhere resumes from it without
    /// loss or repetition. Ends when the task is cancelled.
    func changePages(since anchor: SyncAnchor, options: MonitorOptions) -> PullSequence<ChangePage>
}

extension FileProviderMonitor {
    /// Streams changes under `path` with default options and the given recursion.
    public func changes(at path: String, recursive: Bool) -> PullSequence<FileChangeEvent> {
        changes(at: path, options: MonitorOptions(recursive: recursive))
    }
}
