import CCurl
public import Foundation
public import GatewayCore
public import Logging
import Synchronization

/// An HTTP client on libcurl for one remote: pooled keep-alive connections (HTTP/2 where the server
/// offers it over TLS), streamed request and response bodies with back-pressure, credentials kept
/// out of URLs, logs and errors, and a stalled server turned into a time-out.
///
/// Every running transfer has a thread to itself (reused from one request to the next), never one
/// of the Swift concurrency pool's, so blocking network I/O cannot starve async work. A caller that
/// already runs on such a thread (a task preferring a ``BlockingIOExecutor``) runs a request with a
/// body at hand and a collected answer (``send(_:maxBodySize:)``) itself, with no hand-off.
public final class HTTPClient: Sendable {
    /// The configuration in use.
    public let configuration: HTTPClientConfiguration
    private let pool: HandlePool
    private let logger: Logger
    /// Buffers that received bodies are gathered in (``DownloadChannel``), reused across transfers.
    private let bodyBuffers = ChunkBufferPool(size: 256 << 10, limit: 16)
    /// The threads transfers run on, reused from one request to the next (a caller already on a
    /// ``BlockingIOExecutor`` thread runs small requests itself).
    let threads = BlockingIOExecutor()
    /// The authentication scheme learned from the server's first challenge (`CURLAUTH_*` bits).
    private let learnedAuth = Mutex<Int?>(nil)
    /// Whether the server was asked once, so a server that never challenges is not asked again.
    private let authProbed = Atomic<Bool>(false)
    /// The configured origin (``origin(of:)`` of the base URL): the only one credentials go to.
    private let baseOrigin: String

    /// The default response buffer of a transfer (``HTTPRequest/responseBuffer``).
    public static let bufferCapacity = 4 << 20

    /// Creates a client.
    public init(configuration: HTTPClientConfiguration, logger: Logger) {
        self.configuration = configuration
        self.pool = HandlePool(limit: configuration.maxConnections)
        self.logger = logger
        self.baseOrigin = Self.origin(of: configuration.baseURL)
        SecretRedaction.register(configuration.password, user: configuration.user)
        SecretRedaction.register(configuration.bearerToken)
        if configuration.insecureTLS {
            logger.warning("TLS certificate verification is disabled for this remote (insecure_tls)")
        }
    }

    /// Sends a request and returns as soon as the response's status and headers are in; the body
    /// streams as the caller iterates. Dropping the stream early aborts the transfer.
    public func stream(_ request: HTTPRequest) async throws -> (HTTPResponseHead, ByteStream) {
        try await exchange(request, collecting: nil)
    }

    /// Sends a request, retrying where that is safe (below); with `collecting`, the body is
    /// gathered (up to that many bytes) before the call returns.
    private func exchange(_ request: HTTPRequest, collecting: Int?) async throws -> (HTTPResponseHead, ByteStream) {
        if request.hasBody, configuration.user != nil, !authProbed.load(ordering: .relaxed) {
            // Learn the auth scheme with a bodiless request first, so that no body is spent on (or
            // cut short by) the server's first challenge.
            authProbed.store(true, ordering: .relaxed)
            _ = try await send(HTTPRequest(method: "OPTIONS", url: configuration.baseURL, path: "/"))
        }
        // A request that has not had an answer yet and whose body can be sent again is retried when
        // the connection fails under it (a kept-alive connection the server closed, a reset HTTP/2
        // stream). Streamed bodies are not: they cannot be read twice. A collected answer (`send`)
        // reaches this caller only whole, so a connection lost in the middle of its body is retried
        // too: these methods can be repeated, and the answer is collected again from the start.
        // Busy answers (429, 500, 502, 503, 504) to such requests are retried the same way, after
        // the server's Retry-After when it gives one: S3 asks for a retry of a 500 InternalError,
        // and file-backed servers answer 500 to a race inside them (two writes making one folder).
        let repeatable: Bool = if case .stream = request.body { false } else { Self.retriableMethods.contains(request.method) }
        var attempt = 1
        while true {
            do {
                let (head, body) = try await send(once: request, collecting: collecting)
                guard repeatable, attempt < configuration.requestAttempts, Self.busyStatuses.contains(head.status) else {
                    return (head, body)
                }
                _ = try? await body.collect(limit: 1 << 16)
                let pause = head.retryAfter.map { min($0, .seconds(30)) } ?? .milliseconds(100 * (1 << min(attempt, 8)))
                logger.debug("server busy; retrying", metadata: [
                    "method": .string(request.method), "path": .string(request.path), "status": .stringConvertible(head.status),
                    "attempt": .stringConvertible(attempt),
                ])
                try await Task.sleep(for: pause)
            } catch let error as URLError where error.code == .networkConnectionLost && repeatable
                        && attempt < configuration.requestAttempts {
                logger.debug("connection failed before an answer; retrying", metadata: [
                    "method": .string(request.method), "path": .string(request.path), "attempt": .stringConvertible(attempt),
                ])
                try await Task.sleep(for: .milliseconds(50 * min(attempt, 20)))
            }
            attempt += 1
        }
    }

    /// Answers that mean "try again later" (as ErrorClassification counts them transient).
    static let busyStatuses: Set<Int> = [429, 500, 502, 503, 504]
    /// Methods sent again after such a failure: those whose repetition cannot change the outcome.
    /// (A MOVE or DELETE the server did carry out before the connection broke would answer 404 the
    /// second time, hiding the success.)
    static let retriableMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "PROPFIND", "PUT"]

    private func send(once request: HTTPRequest, collecting: Int?) async throws -> (HTTPResponseHead, ByteStream) {
        let easy = try await pool.acquire()
        var request = request
        request.prepare?(&request)
        let download = DownloadChannel(capacity: request.responseBuffer, pool: bodyBuffers)
        var upload: UploadChannel?
        switch request.body {
        case .none:
            break
        case .data:
            break  // handed to libcurl as a copied buffer, which it can resend after an auth challenge
        case .stream(let stream):
            let channel = UploadChannel(capacity: request.requestBuffer)
            upload = channel
            Task { await channel.pump(stream) }
        }
        let transfer = CurlTransfer(easy: easy, path: request.path, remote: configuration.remoteName, download: download, upload: upload)
        do {
            try configure(easy, for: request, transfer: transfer)
        } catch {
            upload?.close()
            pool.release(easy, reusable: false)
            throw error
        }
        // A collected answer to a request whose body is at hand needs nothing from the caller while
        // it runs: a caller on a blocking thread runs it right there (no hand-off, no wake-up).
        var inline = false
        if let collecting {
            transfer.collectBody(upTo: collecting)
            inline = upload == nil && BlockingIOExecutor.isCurrentThread
        }
        logger.debug("http request", metadata: ["method": .string(request.method), "path": .string(request.path)])
        let finished: @Sendable (CURLcode) -> Void = { [self] code in
            if code == CURLE_OK { learnAuth(from: easy.info(CURLINFO_HTTPAUTH_AVAIL)) }
        }
        if inline {
            await transfer.run(releasingTo: pool, reusable: { $0 == CURLE_OK }, finished: finished)
        } else {
            transfer.start(on: threads, releasingTo: pool, reusable: { $0 == CURLE_OK }, finished: finished)
        }
        var head: HTTPResponseHead
        do {
            head = try await transfer.waitForHead()
            head.method = request.method
        } catch {
            transfer.abort()
            download.abandon()
            throw error
        }
        logger.debug("http response", metadata: ["method": .string(request.method), "path": .string(request.path),
                                                 "status": .stringConvertible(head.status)])
        if collecting != nil { return (head, ByteStream(data: transfer.collectedBody)) }
        let length = head.contentLength
        return (head, transfer.bodyStream(expectedLength: head.isSuccess ? length : nil))
    }

    /// Sends a request and collects the response body (up to `maxBodySize` bytes; the rest is
    /// dropped). For small answers: errors, MKCOL, DELETE, MOVE.
    ///
    /// Called from a ``BlockingIOExecutor`` thread, a request without a streamed body runs on that
    /// thread, start to end.
    public func send(_ request: HTTPRequest, maxBodySize: Int = 1 << 20) async throws -> (HTTPResponseHead, Data) {
        let (head, body) = try await exchange(request, collecting: maxBodySize)
        return (head, try await body.collect(limit: maxBodySize))
    }

    /// `scheme://host:port` of a URL, lower-cased, with the scheme's default port filled in: two
    /// URLs of one origin (RFC 6454) give the same text. Credentials go to the configured origin only.
    public static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    /// Remembers the scheme the server challenged with, so later requests authenticate at once.
    private func learnAuth(from available: Int) {
        if available & CurlAuth.digest != 0 {
            learnedAuth.withLock { $0 = CurlAuth.digest }
        } else if available & CurlAuth.basic != 0 {
            learnedAuth.withLock { $0 = CurlAuth.basic }
        }
    }

    /// Methods whose answer may be large (contents, listings), read with a large buffer; the
    /// others' answers are a status and a few lines.
    static let largeAnswerMethods: Set<String> = ["GET", "PROPFIND", "REPORT", "SEARCH", "POST"]

    private func configure(_ easy: CurlEasy, for request: HTTPRequest, transfer: CurlTransfer) throws {
        // Protocols: https stays https (also through redirects); an http base may be redirected to https.
        let scheme = configuration.baseURL.scheme?.lowercased() == "https" ? "https" : "http,https"
        try easy.prepare(url: request.url.absoluteString, protocols: scheme, timeouts: configuration.timeouts,
                         tls: CurlEasy.TLSTrust(caFile: configuration.caFile, insecure: configuration.insecureTLS), transfer: transfer,
                         largeAnswer: Self.largeAnswerMethods.contains(request.method.uppercased()))
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, scheme)
        try easy.set(CURLOPT_USERAGENT, configuration.userAgent)
        try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))

        var headers = request.headers.map { "\($0.name): \($0.value)" }
        let learned = learnedAuth.withLock { $0 }
        if case .stream = request.body, learned == CurlAuth.digest {
            // Digest cannot authenticate before the server's challenge: with "Expect: 100-continue"
            // the body waits for it instead of being sent twice (a stream cannot be rewound).
        } else {
            headers.append("Expect:")
        }
        // Credentials only for the configured origin (scheme, host and port): a request sent
        // elsewhere (a redirect's target) goes without them.
        if Self.origin(of: request.url) == baseOrigin {
            if let user = configuration.user {
                try easy.set(CURLOPT_USERNAME, user)
                try easy.set(CURLOPT_PASSWORD, configuration.password ?? "")
                try easy.set(CURLOPT_HTTPAUTH, learned ?? CurlAuth.basic | CurlAuth.digest)
            } else if let token = configuration.bearerToken {
                headers.append("Authorization: Bearer \(token)")
            }
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers { list = curl_slist_append(list, header) }
        transfer.headerList = list
        try easy.set(CURLOPT_HTTPHEADER, list: list)

        switch request.method {
        case "GET":
            try easy.set(CURLOPT_HTTPGET, true)
        case "HEAD":
            try easy.set(CURLOPT_NOBODY, true)
        default:
            try easy.set(CURLOPT_CUSTOMREQUEST, request.method)
        }
        switch request.body {
        case .none:
            break
        case .data(let data):
            try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(data.count))
            try data.withUnsafeBytes { buffer in
                try easy.set(CURLOPT_COPYPOSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
            }
            try easy.set(CURLOPT_CUSTOMREQUEST, request.method)
        case .stream(let stream):
            try easy.attachUpload(transfer, length: stream.expectedLength, seekable: true)
            if request.method != "PUT" { try easy.set(CURLOPT_CUSTOMREQUEST, request.method) }
        }
    }
}
