import Foundation

/// What went wrong, in the terms a caller acts on: retry, ask for credentials, give up.
public enum FailureKind: String, Sendable, Hashable, CaseIterable {
    case notFound
    case notAuthenticated
    case permissionDenied
    case alreadyExists
    case noSpace
    case notADirectory
    case isADirectory
    case directoryNotEmpty
    case invalidInput
    case unsupported
    case conflict
    case versionMismatch
    case malformedResponse
    /// The bytes that arrived do not have the content hash the source reported.
    case checksumMismatch
    case cancelled
    case timedOut
    case connectionLost
    case serverBusy
    case locked
    case other

    /// `true` when the same request may well succeed if tried again later (time-outs, dropped
    /// connections, 5xx and 429 answers, locks, bytes damaged on the way); `false` for answers that will not change
    /// (not found, not authenticated, permission, exists, no space, malformed data).
    public var isTransient: Bool {
        switch self {
        case .timedOut, .connectionLost, .serverBusy, .locked, .checksumMismatch:
            return true
        default:
            return false
        }
    }
}

/// An error type that knows its own ``FailureKind``. Backends conform their structured errors to it
/// (for example an FTP reply error) so the shared classification covers them without core changes.
public protocol ClassifiableError: Error {
    /// The kind of failure.
    var failureKind: FailureKind { get }
}

/// An error that describes itself for messages and retries, whatever backend made it: its one-line
/// text, the remote path it concerns, the server's own words and how long the server asked to
/// wait. ``ErrorMessage`` and the copy engine's retries read errors only through it (and
/// Foundation's errors), so a new backend's errors need no change to the core.
public protocol DescribedFailure: ClassifiableError, CustomStringConvertible {
    /// The remote path the failure concerns, if any.
    var failurePath: String? { get }
    /// What the server said (a reply line, a response body's text), trimmed; `nil` when nothing.
    var serverText: String? { get }
    /// How long the server asked to wait before trying again (HTTP `Retry-After`), if it did.
    var retryAfter: Duration? { get }
}

extension DescribedFailure {
    public var serverText: String? { nil }
    public var retryAfter: Duration? { nil }
}

extension FileProviderError: DescribedFailure {
    public var failurePath: String? { path }
}

extension FileProviderHTTPError: DescribedFailure {
    public var failurePath: String? { path }
}

extension FileProviderFTPError: DescribedFailure {
    public var failurePath: String? { path }
}

/// Key in a `CocoaError`'s `userInfo` naming the remote the failure happened on.
public let GatewayRemoteNameErrorKey = "GatewayRemoteName"

extension FileProviderError: ClassifiableError {
    public var failureKind: FailureKind {
        switch self {
        case .pathEscapesRoot: return .permissionDenied
        case .invalidPath: return .invalidInput
        case .unsupported, .unavailable: return .unsupported
        case .truncated: return .connectionLost
        case .versionMismatch: return .versionMismatch
        case .malformedResponse: return .malformedResponse
        case .checksumMismatch: return .checksumMismatch
        case .anchorExpired: return .versionMismatch
        case .stateStoreUnavailable: return .locked
        case .undoRefused: return .conflict
        }
    }
}

extension FileProviderHTTPError: ClassifiableError {
    public var failureKind: FailureKind {
        switch statusCode {
        case 401, 407: return .notAuthenticated
        case 403: return .permissionDenied
        case 404, 410: return .notFound
        case 405, 501: return .unsupported
        case 409: return .conflict
        case 412: return .versionMismatch
        case 423: return .locked
        case 408, 504: return .timedOut
        case 429, 500, 502, 503: return .serverBusy
        case 507: return .noSpace
        case 400..<500: return .invalidInput
        default: return .other
        }
    }
}

extension Error {
    /// How the gateway classifies this error, whatever its concrete type: ``ClassifiableError``,
    /// Foundation's `CocoaError` / `URLError` / `POSIXError`, or `CancellationError`.
    public var failureKind: FailureKind {
        if let classified = self as? any ClassifiableError { return classified.failureKind }
        if self is CancellationError { return .cancelled }
        if let cocoa = self as? CocoaError { return Self.kind(of: cocoa) }
        if let url = self as? URLError { return Self.kind(of: url) }
        if let posix = self as? POSIXError { return Self.kind(errno: posix.code.rawValue) }
        let ns = self as NSError
        if ns.domain == NSPOSIXErrorDomain { return Self.kind(errno: Int32(ns.code)) }
        return .other
    }

    /// `true` when retrying may help (see ``FailureKind/isTransient``).
    public var isTransient: Bool { failureKind.isTransient }

    private static func kind(of error: CocoaError) -> FailureKind {
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError,
           underlying.domain == NSPOSIXErrorDomain {
            let kind = kind(errno: Int32(underlying.code))
            if kind != .other { return kind }
        }
        switch error.code {
        case .fileNoSuchFile, .fileReadNoSuchFile: return .notFound
        case .fileWriteFileExists: return .alreadyExists
        case .fileReadNoPermission, .fileWriteNoPermission, .fileWriteVolumeReadOnly: return .permissionDenied
        case .fileWriteOutOfSpace: return .noSpace
        case .fileReadInvalidFileName, .fileWriteInvalidFileName: return .invalidInput
        case .fileReadCorruptFile, .fileReadTooLarge, .fileReadUnknownStringEncoding: return .invalidInput
        case .userCancelled: return .cancelled
        case .featureUnsupported: return .unsupported
        default: return .other
        }
    }

    private static func kind(of error: URLError) -> FailureKind {
        switch error.code {
        case .timedOut: return .timedOut
        case .networkConnectionLost, .cannotConnectToHost, .notConnectedToInternet, .dnsLookupFailed,
             .resourceUnavailable:
            return .connectionLost
        case .userAuthenticationRequired, .userCancelledAuthentication: return .notAuthenticated
        case .noPermissionsToReadFile: return .permissionDenied
        case .fileDoesNotExist, .cannotFindHost: return .notFound
        case .cancelled: return .cancelled
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData:
            return .malformedResponse
        case .unsupportedURL, .badURL: return .invalidInput
        case .fileIsDirectory: return .isADirectory
        default: return .other
        }
    }

    /// Classifies a POSIX `errno` value.
    static func kind(errno code: Int32) -> FailureKind {
        switch code {
        case ENOENT: return .notFound
        case EEXIST: return .alreadyExists
        case EACCES, EPERM, EROFS: return .permissionDenied
        case ENOSPC, EDQUOT, EFBIG: return .noSpace
        case ENOTDIR: return .notADirectory
        case EISDIR: return .isADirectory
        case ENOTEMPTY: return .directoryNotEmpty
        case EINVAL, ENAMETOOLONG, ELOOP: return .invalidInput
        case ETIMEDOUT: return .timedOut
        case ECONNRESET, ECONNREFUSED, EPIPE, ENETUNREACH, EHOSTUNREACH, ECONNABORTED: return .connectionLost
        case EAGAIN, EINTR, EBUSY: return .serverBusy
        case ENOTSUP, EXDEV: return .unsupported
        case ECANCELED: return .cancelled
        default: return .other
        }
    }
}
