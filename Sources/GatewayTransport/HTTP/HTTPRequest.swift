public import Foundation
public import GatewayCore

/// One HTTP request.
public struct HTTPRequest: Sendable {
    /// The body to send.
    public enum Body: Sendable {
        case none
        case data(Data)
        /// Streamed; `Content-Length` is sent when the stream knows its length.
        case stream(ByteStream)
    }

    /// `GET`, `PUT`, `PROPFIND`, ...
    public var method: String
    /// The full URL (no credentials in it).
    public var url: URL
    /// The remote path the request concerns, for errors.
    public var path: String
    /// Extra headers.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Body
    /// How many bytes of the response body may wait in memory for the reader (back-pressure
    /// stops the transfer beyond that).
    public var responseBuffer: Int = HTTPClient.bufferCapacity
    /// How many bytes of a streamed request body may be read ahead of what libcurl has sent.
    public var requestBuffer: Int = HTTPClient.bufferCapacity
    /// Called on each attempt once a connection is at hand, just before the request is sent: for
    /// what must be fresh when it leaves (an S3 signature is dated, and a request may wait for a
    /// connection, or be retried, for longer than the server's allowed clock skew).
    public var prepare: (@Sendable (inout HTTPRequest) -> Void)?

    /// Creates a request.
    ///
    /// Redirects are never followed here: a caller that wants to follow one reads its `Location`
    /// and sends a new request (the WebDAV provider does, on the configured origin only).
    public init(method: String, url: URL, path: String, headers: [(name: String, value: String)] = [], body: Body = .none) {
        self.method = method
        self.url = url
        self.path = path
        self.headers = headers
        self.body = body
    }
}

extension HTTPRequest {
    /// Whether the request carries a body.
    var hasBody: Bool {
        if case .none = body { return false }
        return true
    }
}

/// Status and headers of a response.
public struct HTTPResponseHead: Sendable {
    /// The status code of the final response.
    public var status: Int
    /// Headers by lower-case name (the last value wins).
    public var headers: [String: String]
    /// The HTTP version the response came over: `"1.1"`, `"2"`, ...
    public var httpVersion: String
    /// The method of the request this answers (set by ``HTTPClient``), so an error can be worded
    /// for it (a 409 to PUT is a missing parent folder, to DELETE it is not).
    public var method: String?

    /// Creates a head.
    public init(status: Int, headers: [String: String], httpVersion: String = "1.1") {
        self.status = status
        self.headers = headers
        self.httpVersion = httpVersion
    }

    /// A header's value, by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// `true` for 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// `Retry-After` in seconds (the HTTP-date form is not used by the servers we meet); a negative
    /// value counts as 0.
    public var retryAfter: Duration? {
        header("retry-after").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { .seconds(max(0, $0)) }
    }

    /// `Content-Length`, when it is a plain non-negative number (a hostile `-5` or a value past
    /// `Int64.max` is no length at all).
    public var contentLength: Int64? {
        guard let text = header("content-length")?.trimmingCharacters(in: .whitespaces), !text.isEmpty,
              text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(text)
    }
}
