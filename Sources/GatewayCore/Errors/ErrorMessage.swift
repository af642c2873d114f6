import Foundation

/// Turns any error into the short reason text the CLI prints after `gateway: <op> <remote:path>:`.
///
/// The text never contains a URL's user-info or a password: providers keep credentials out of errors,
/// ``redactingCredentials(in:)`` and ``SecretRedaction`` are applied to whatever text remains as a
/// last guard (a server may echo a credential back), and control characters are escaped
/// (``TerminalText``), so a server's text can neither rewrite the terminal nor break the line.
public enum ErrorMessage {
    /// A one-line, lower-case reason such as `no such file or directory` or `HTTP 507 insufficient storage`.
    public static func reason(for error: any Error) -> String {
        let text: String
        switch error {
        case let error as any DescribedFailure:
            text = error.description
        case let error as CocoaError:
            text = cocoaReason(error)
        case let error as URLError:
            text = urlReason(error)
        case is CancellationError:
            text = "cancelled"
        case let error as any CustomStringConvertible:
            text = error.description
        default:
            text = (error as NSError).localizedDescription
        }
        return TerminalText.escaped(SecretRedaction.redact(redactingCredentials(in: text)))
    }

    private static func kindText(_ kind: FailureKind) -> String? {
        switch kind {
        case .notFound: return "no such file or directory"
        case .alreadyExists: return "already exists"
        case .permissionDenied: return "permission denied"
        case .noSpace: return "no space left on device"
        case .notADirectory: return "not a directory"
        case .isADirectory: return "is a directory"
        case .directoryNotEmpty: return "directory not empty"
        case .notAuthenticated: return "not authenticated (check user and password)"
        case .cancelled: return "cancelled"
        case .timedOut: return "timed out"
        case .connectionLost: return "connection lost"
        case .unsupported: return "operation not supported"
        case .invalidInput: return "invalid argument"
        default: return nil
        }
    }

    private static func cocoaReason(_ error: CocoaError) -> String {
        if let reason = error.userInfo[NSLocalizedFailureReasonErrorKey] as? String { return reason }
        if let text = kindText(error.failureKind) { return text }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return "I/O error (errno \(underlying.code))"
        }
        return "file error (code \(error.code.rawValue))"
    }

    private static func urlReason(_ error: URLError) -> String {
        switch error.code {
        case .cannotConnectToHost: return "cannot connect to host (connection refused or unreachable)"
        case .cannotFindHost: return "cannot resolve host name"
        case .timedOut: return "timed out"
        case .networkConnectionLost: return "connection lost"
        case .secureConnectionFailed: return "TLS handshake failed"
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid:
            return "server certificate not trusted (set ca_file, or insecure_tls for testing)"
        case .userAuthenticationRequired: return "not authenticated (check user and password)"
        case .badServerResponse: return "bad server response"
        default:
            if let text = kindText(error.failureKind) { return text }
            if let detail = error.userInfo[NSLocalizedDescriptionKey] as? String { return "network error: \(detail)" }
            return "network error (code \(error.code.rawValue))"
        }
    }

    /// The remote path an error is about, when it carries one.
    public static func path(of error: any Error) -> String? {
        switch error {
        case let error as any DescribedFailure: return error.failurePath
        case let error as CocoaError: return error.userInfo[NSFilePathErrorKey] as? String
        case let error as URLError: return error.userInfo[NSFilePathErrorKey] as? String
        default: return nil
        }
    }

    /// Removes `user:password@` from any URL in `text`, so a message can never leak a credential.
    public static func redactingCredentials(in text: String) -> String {
        guard text.contains("@"), text.contains("://") else { return text }
        var result = ""
        var rest = Substring(text)
        while let schemeRange = rest.range(of: "://") {
            result += rest[..<schemeRange.upperBound]
            rest = rest[schemeRange.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == " " || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") {
                result += "***@"
                rest = rest[rest.index(after: at)...]
            }
        }
        return result + rest
    }
}
