/// A change seen on a remote.
public struct FileChangeEvent: Sendable, Hashable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable {
        case created, modified, removed, renamed
    }

    /// What happened.
    public var kind: Kind
    /// The item's path after the change.
    public var path: String
    /// For ``Kind/renamed``, the path before the change.
    public var previousPath: String?

    /// Creates an event.
    public init(kind: Kind, path: String, previousPath: String? = nil) {
        self.kind = kind
        self.path = path
        self.previousPath = previousPath
    }
}

/// Change notification: a provider that can tell when items under a folder change (inotify for
/// local folders, polling or server push for network backends).
///
/// Implementations arrive with the monitoring issue; the protocol is declared now so that apps can
/// code against it.
public protocol FileProviderMonitor: FileProviderBasic {
    /// Streams changes under `path` until the consumer stops iterating or the task is cancelled.
    func changes(at path: String, recursive: Bool) -> PullSequence<FileChangeEvent>
}
