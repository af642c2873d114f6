public import Foundation

extension CocoaError {
    /// Builds the `CocoaError` that matches a POSIX `errno`, carrying the remote path, the remote's
    /// name and the underlying POSIX error, so messages and ``FailureKind`` both come out right.
    ///
    /// - Parameters:
    ///   - code: the `errno` value.
    ///   - path: the path inside the remote (never a host path outside the remote's root).
    ///   - remote: the remote's name, if known.
    ///   - writing: whether the failed operation was a write (chooses read/write codes).
    public static func posix(_ code: Int32, path: String, remote: String? = nil, writing: Bool = false) -> CocoaError {
        let cocoaCode: CocoaError.Code
        switch code {
        case ENOENT: cocoaCode = writing ? .fileNoSuchFile : .fileReadNoSuchFile
        case EEXIST: cocoaCode = .fileWriteFileExists
        case EACCES, EPERM: cocoaCode = writing ? .fileWriteNoPermission : .fileReadNoPermission
        case EROFS: cocoaCode = .fileWriteVolumeReadOnly
        case ENOSPC, EDQUOT: cocoaCode = .fileWriteOutOfSpace
        case ENAMETOOLONG: cocoaCode = writing ? .fileWriteInvalidFileName : .fileReadInvalidFileName
        case ECANCELED: cocoaCode = .userCancelled
        default: cocoaCode = writing ? .fileWriteUnknown : .fileReadUnknown
        }
        // `localizedDescription` reads "docs:/a.txt: No such file or directory" (Foundation's own
        // text for a CocoaError built here names no path and often no cause).
        var info: [String: Any] = [
            NSFilePathErrorKey: path,
            NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(code)),
            NSLocalizedDescriptionKey: "\(remote.map { "\($0):" } ?? "")\(path): \(String(cString: strerror(code)))",
        ]
        if let remote { info[GatewayRemoteNameErrorKey] = remote }
        return CocoaError(cocoaCode, userInfo: info)
    }

    /// A `CocoaError` with a path and an explanation, for failures that have no `errno`.
    public static func described(_ code: CocoaError.Code, path: String, remote: String? = nil, reason: String) -> CocoaError {
        var info: [String: Any] = [NSFilePathErrorKey: path, NSLocalizedFailureReasonErrorKey: reason,
                                   NSLocalizedDescriptionKey: "\(remote.map { "\($0):" } ?? "")\(path): \(reason)"]
        if let remote { info[GatewayRemoteNameErrorKey] = remote }
        return CocoaError(code, userInfo: info)
    }
}
