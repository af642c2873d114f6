public import GatewayCore
public import GatewaySFTPProtocol

/// Why an SFTP session could not be set up or went away, in words that tell the user what to do.
public enum SFTPClientError: Error, Sendable, DescribedFailure {
    /// The server's host key is not in `known_hosts` (nor matched `host_key_fingerprint`).
    case hostKeyUnknown(host: String, keyType: String, fingerprint: String, knownHosts: String?)
    /// The server's host key differs from the one on file: possibly someone in the middle.
    case hostKeyChanged(host: String, keyType: String, fingerprint: String, known: [String], knownHosts: String?)
    /// The key is marked `@revoked` in `known_hosts`.
    case hostKeyRevoked(host: String, fingerprint: String)
    /// The server refused every credential offered.
    case authenticationFailed(user: String, tried: [String], serverOffers: String)
    /// The server has no `sftp` subsystem for this account.
    case subsystemRefused(host: String)
    /// The server broke the protocol (a reply to no request, a malformed packet).
    case protocolViolation(String)
    /// The connection closed or failed.
    case connectionClosed(reason: String)
    /// No reply within the idle time-out.
    case timedOut(what: String, seconds: Double)
    /// The system's `ssh` client (the `ssh_command` channel) failed; its last words.
    case sshCommandFailed(status: String, stderr: String)

    public var failureKind: FailureKind {
        switch self {
        case .hostKeyUnknown, .hostKeyChanged, .hostKeyRevoked, .authenticationFailed: .notAuthenticated
        case .subsystemRefused: .unsupported
        case .protocolViolation: .malformedResponse
        case .connectionClosed: .connectionLost
        case .timedOut: .timedOut
        case .sshCommandFailed: .connectionLost
        }
    }

    public var failurePath: String? { nil }

    public var description: String {
        switch self {
        case .hostKeyUnknown(let host, let type, let fingerprint, let knownHosts):
            let file = knownHosts.map { " in \($0)" } ?? ""
            return "the host key of \(host) is not known\(file): \(type) \(fingerprint). If it is right, add it to known_hosts "
                + "(ssh-keyscan) or set host_key_fingerprint to \(fingerprint)"
        case .hostKeyChanged(let host, let type, let fingerprint, let known, let knownHosts):
            let file = knownHosts.map { " (\($0))" } ?? ""
            return "the host key of \(host) has CHANGED: the server offers \(type) \(fingerprint), known_hosts\(file) has "
                + "\(known.joined(separator: ", ")). Someone may be intercepting the connection; if the key was replaced, update known_hosts"
        case .hostKeyRevoked(let host, let fingerprint):
            return "the host key of \(host) (\(fingerprint)) is marked @revoked in known_hosts"
        case .authenticationFailed(let user, let tried, let offers):
            let methods = tried.isEmpty ? "no credentials were configured" : "tried \(tried.joined(separator: ", "))"
            return "not authenticated as \(user): \(methods); the server accepts \(offers)"
        case .subsystemRefused(let host):
            return "\(host) refused the sftp subsystem (is SFTP enabled for this account?)"
        case .protocolViolation(let detail):
            return "the SFTP server broke the protocol: \(detail)"
        case .connectionClosed(let reason):
            return "the SFTP connection closed: \(reason)"
        case .timedOut(let what, let seconds):
            return "timed out: no answer to \(what) in \(seconds.formatted()) s"
        case .sshCommandFailed(let status, let stderr):
            return stderr.isEmpty ? "ssh_command \(status)" : "ssh_command \(status): \(stderr)"
        }
    }
}

extension Double {
    fileprivate func formatted() -> String {
        self == rounded() ? String(Int(self)) : String(self)
    }
}

/// The server answered a request with an error status: its code, its message, the operation and the path.
public struct SFTPStatusError: Error, Sendable, Hashable, DescribedFailure {
    /// The status code's number (`SSH_FX_*`).
    public var code: UInt32
    /// What the server said.
    public var message: String
    /// The request, e.g. `RENAME`.
    public var operation: String
    /// The remote path it was for.
    public var path: String

    public init(code: SFTPStatusCode, message: String, operation: String, path: String) {
        self.code = code.rawValue
        self.message = String(message.prefix(512))
        self.operation = operation
        self.path = path
    }

    public var failurePath: String? { path }
    public var serverText: String? { message.isEmpty ? nil : message }

    public var failureKind: FailureKind {
        switch SFTPStatusCode(code) {
        case .noSuchFile: .notFound
        case .permissionDenied: .permissionDenied
        case .noConnection, .connectionLost: .connectionLost
        case .operationUnsupported: .unsupported
        case .badMessage: .malformedResponse
        // Codes of later drafts that some v3 servers send anyway.
        case .other(11): .alreadyExists
        case .other(14), .other(15): .noSpace
        case .other(18): .directoryNotEmpty
        case .other(19): .notADirectory
        case .other(24): .isADirectory
        default: .other
        }
    }

    public var description: String {
        let said = message.isEmpty ? "" : ": \(message)"
        return "\(operation) \"\(RemotePath.printable(path))\" failed (SFTP status \(code))\(said)"
    }
}
