public import Foundation

/// An HTTP request to a remote failed with a status code the provider could not turn into success.
///
/// Carries the status code, the remote path (never the full URL, which could hold credentials) and
/// the first part of the server's response text.
public struct FileProviderHTTPError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The HTTP status code, e.g. 404 or 507.
    public var statusCode: Int
    /// The path inside the remote the request was for.
    public var path: String
    /// A short excerpt of the server's response body or status text, if it sent one.
    public var serverText: String?
    /// Seconds the server asked us to wait (`Retry-After`), when it said.
    public var retryAfter: Duration?
    /// The request method that met the error (`PUT`, `DELETE`...), when known: some statuses mean
    /// different things for different methods.
    public var method: String?

    /// Creates an HTTP error. `serverText` is trimmed to 512 characters.
    public init(statusCode: Int, path: String, serverText: String? = nil, retryAfter: Duration? = nil, method: String? = nil) {
        self.method = method
        self.statusCode = statusCode
        self.path = path
        if let serverText {
            let trimmed = serverText.trimmingCharacters(in: .whitespacesAndNewlines)
            self.serverText = trimmed.isEmpty ? nil : String(trimmed.prefix(512))
        } else {
            self.serverText = nil
        }
        self.retryAfter = retryAfter
    }

    /// The standard reason phrase for the status code.
    public var reasonPhrase: String {
        switch statusCode {
        case 400: return "bad request"
        case 401: return "not authenticated"
        case 403: return "permission denied"
        case 404: return "not found"
        case 405: return "method not allowed"
        case 408: return "request timeout"
        case 409:
            // RFC 4918: a 409 to PUT, MKCOL, COPY or MOVE means a missing parent collection.
            switch method {
            case "PUT", "MKCOL", "COPY", "MOVE", nil: return "conflict (missing parent folder?)"
            default: return "conflict"
            }
        case 412: return "precondition failed"
        case 413: return "payload too large"
        case 415: return "unsupported media type"
        case 423: return "locked"
        case 424: return "failed dependency"
        case 429: return "too many requests"
        case 500: return "internal server error"
        case 501: return "not implemented"
        case 502: return "bad gateway"
        case 503: return "service unavailable"
        case 504: return "gateway timeout"
        case 507: return "insufficient storage"
        default: return "HTTP error"
        }
    }

    public var description: String {
        var text = "HTTP \(statusCode) \(reasonPhrase)"
        if let serverText { text += ": \(serverText)" }
        return text
    }

    public var errorDescription: String? { description }
}
