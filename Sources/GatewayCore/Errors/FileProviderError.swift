public import Foundation

/// Failures that belong to the gateway itself rather than to a transport: a path that would escape
/// the remote's root, an operation a backend cannot do, a listing that ended early.
///
/// Transport and file-system failures use Foundation's `CocoaError` and `URLError`, and HTTP failures
/// ``FileProviderHTTPError``; see ``FailureKind`` for how all of them are classified.
public enum FileProviderError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The path climbs above the remote's root (`..`), or resolves outside it through a symbolic link.
    case pathEscapesRoot(path: String)
    /// The path is not acceptable (a NUL byte, an empty name where one is needed).
    case invalidPath(path: String, reason: String)
    /// The provider does not offer this operation; ``ProviderCapabilities`` says so up front.
    case unsupported(operation: String, path: String?)
    /// The remote cannot provide something it could in principle (quota on a server without RFC 4331);
    /// `reason` says so in a full sentence.
    case unavailable(reason: String, path: String?)
    /// A listing or stream ended before the backend said it was complete.
    case truncated(path: String, reason: String)
    /// The item changed since the version the caller named (a conditional read or write failed).
    case versionMismatch(path: String, expected: String, actual: String?)
    /// The backend answered with something that cannot be understood (malformed XML or listing line).
    case malformedResponse(path: String, detail: String)
    /// The bytes read from `path` do not have the content hash its provider reported: damaged on the
    /// way, or the file changed while it was read. Nothing was stored under the destination's name.
    case checksumMismatch(path: String, algorithm: HashAlgorithm, expected: String, actual: String)
    /// A ``SyncAnchor`` can no longer be served (the state behind it is gone, its history was pruned,
    /// or it belongs to another remote or folder): start over from a full listing.
    case anchorExpired(path: String, reason: String)
    /// The local state store cannot be used: another process holds it, or it is damaged.
    case stateStoreUnavailable(path: String, reason: String)
    /// An undo step was refused to keep data safe: the item changed after the operation, or its
    /// original place is taken again. `reason` says which.
    case undoRefused(path: String, reason: String)

    public var description: String {
        switch self {
        case .pathEscapesRoot(let path):
            return "path \"\(RemotePath.printable(path))\" escapes the remote's root"
        case .invalidPath(let path, let reason):
            return "invalid path \"\(RemotePath.printable(path))\": \(reason)"
        case .unsupported(let operation, _):
            return "not supported by this remote: \(operation)"
        case .unavailable(let reason, _):
            return reason
        case .truncated(_, let reason):
            return "listing or transfer ended early: \(reason)"
        case .versionMismatch(_, let expected, let actual):
            return "item changed: expected version \(expected), found \(actual ?? "none")"
        case .malformedResponse(_, let detail):
            return "malformed response: \(detail)"
        case .checksumMismatch(_, let algorithm, let expected, let actual):
            return "\(algorithm.rawValue) checksum mismatch: expected \(expected), the bytes read have \(actual); nothing was stored"
        case .anchorExpired(_, let reason):
            return "anchor expired: \(reason)"
        case .stateStoreUnavailable(let path, let reason):
            return "state store \(path): \(reason)"
        case .undoRefused(_, let reason):
            return "not undone: \(reason)"
        }
    }

    public var errorDescription: String? { description }

    /// The path the failure concerns, if any.
    public var path: String? {
        switch self {
        case .pathEscapesRoot(let path), .invalidPath(let path, _), .truncated(let path, _),
             .versionMismatch(let path, _, _), .malformedResponse(let path, _), .checksumMismatch(let path, _, _, _),
             .anchorExpired(let path, _), .undoRefused(let path, _):
            return path
        case .unsupported(_, let path), .unavailable(_, let path):
            return path
        case .stateStoreUnavailable:
            return nil
        }
    }
}
