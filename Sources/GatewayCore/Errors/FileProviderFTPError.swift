public import Foundation

/// An FTP server refused a command: the reply code, the command, the remote path and the server's
/// text. The FTP counterpart of ``FileProviderHTTPError``, under the same classification
/// (``ClassifiableError``): 421/425/426/450/451 are transient, 530 means not authenticated, 552 no space.
///
/// A 550 or 553 reply may mean "not found" or "permission denied"; the provider checks which (by
/// looking the path up) and records the answer in ``failureKind``.
public struct FileProviderFTPError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The three-digit reply code, e.g. 550.
    public var replyCode: Int
    /// The command the server refused, without its argument when that could hold a secret (`PASS`).
    public var command: String?
    /// The path inside the remote the command was for.
    public var path: String
    /// The server's reply text (trimmed to 512 characters).
    public var serverText: String?
    /// How the gateway classifies the failure (see the type's documentation).
    public var failureKind: FailureKind

    /// Creates an FTP error; `kind` overrides the classification by reply code (for 550/553 after
    /// the provider checked whether the path exists).
    public init(replyCode: Int, command: String? = nil, path: String, serverText: String? = nil, kind: FailureKind? = nil) {
        self.replyCode = replyCode
        self.command = command
        self.path = path
        let trimmed = serverText?.trimmingCharacters(in: .whitespacesAndNewlines)
        self.serverText = (trimmed?.isEmpty ?? true) ? nil : String(trimmed!.prefix(512))
        self.failureKind = kind ?? Self.kind(forReplyCode: replyCode)
    }

    /// The classification of a reply code on its own.
    public static func kind(forReplyCode code: Int) -> FailureKind {
        switch code {
        case 421, 450: return .serverBusy
        case 425, 426: return .connectionLost
        case 451: return .serverBusy
        case 452, 552: return .noSpace
        case 530, 532: return .notAuthenticated
        case 550: return .notFound
        case 553: return .permissionDenied
        case 500, 502, 504: return .unsupported
        case 501: return .invalidInput
        default: return .other
        }
    }

    /// A short phrase for the reply code.
    public var reasonPhrase: String {
        switch replyCode {
        case 421: return "service not available"
        case 425: return "cannot open data connection"
        case 426: return "data connection closed; transfer aborted"
        case 450: return "file unavailable (busy)"
        case 451: return "local error in processing"
        case 452: return "insufficient storage"
        case 500, 502: return "command not implemented"
        case 501: return "syntax error in arguments"
        case 504: return "parameter not implemented"
        case 530: return "not logged in"
        case 532: return "need account"
        case 550: return failureKind == .permissionDenied ? "permission denied" : failureKind == .notFound ? "not found" : "file unavailable"
        case 552: return "exceeded storage allocation"
        case 553: return "file name not allowed"
        default: return "FTP error"
        }
    }

    public var description: String {
        var text = "FTP \(replyCode) \(reasonPhrase)"
        if let serverText { text += ": \(serverText)" }
        return text
    }

    public var errorDescription: String? { description }
}

extension FileProviderFTPError: ClassifiableError {}
