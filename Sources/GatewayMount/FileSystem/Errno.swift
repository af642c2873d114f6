import Foundation
import GatewayCore

/// The `errno` a program inside the mount sees for a failure of the remote.
enum Errno {
    /// The code for `error`: a POSIX error's own code; otherwise by what kind of failure it is
    /// (``FailureKind``), `EIO` where no code says more.
    static func code(for error: any Error) -> Int32 {
        if let posix = error as? POSIXError { return posix.code.rawValue }
        if let cocoa = error as? CocoaError, let underlying = cocoa.userInfo[NSUnderlyingErrorKey] as? POSIXError {
            return underlying.code.rawValue
        }
        switch error.failureKind {
        case .notFound: return ENOENT
        case .notAuthenticated, .permissionDenied: return EACCES
        case .alreadyExists: return EEXIST
        case .noSpace: return ENOSPC
        case .notADirectory: return ENOTDIR
        case .isADirectory: return EISDIR
        case .directoryNotEmpty: return ENOTEMPTY
        case .invalidInput: return EINVAL
        case .unsupported: return ENOTSUP
        case .cancelled: return EINTR
        case .locked, .serverBusy: return EAGAIN
        // A stalled or lost server is an I/O error, as a disk that stops answering is: what programs
        // expect of read(2) and write(2), never a hang.
        case .timedOut, .conflict, .versionMismatch, .malformedResponse, .checksumMismatch, .connectionLost, .other: return EIO
        }
    }
}
