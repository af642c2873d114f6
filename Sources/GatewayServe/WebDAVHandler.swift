import Foundation
import GatewayCore
import GatewayServeRequests
import GatewayState
import HTTPTypes
import HummingbirdCore
import NIOCore
import Logging

/// Answers WebDAV requests (RFC 4918, classes 1 and 2) from any provider: the one piece `gateway serve
/// webdav` runs for every request. Methods are split by concern: properties
/// (`WebDAVHandler+Properties`), contents (`+Contents`), the namespace (`+Namespace`) and locks
/// (`+Locks`).
struct WebDAVHandler: Sendable {
    let provider: any FileProviderBasic
    let paths: ServePaths
    let options: WebDAVServeOptions
    let logger: Logger
    /// Where `PROPPATCH` keeps dead properties; `nil`: `PROPPATCH` is not offered.
    let deadProperties: DeadPropertyStore?
    /// The server's WebDAV locks.
    let locks: LockTable
    /// The users of `--htpasswd`, when the options name a file.
    let htpasswd: HTPasswd?
    /// What a browser gets: the folder page, file pages, previews and ZIP downloads; `nil`: the
    /// plain index and bytes for everyone.
    var browser: ShareBrowser?

    init(provider: any FileProviderBasic, root: String, options: WebDAVServeOptions, logger: Logger,
         deadProperties: DeadPropertyStore?) throws {
        self.provider = provider
        self.paths = try ServePaths(root: root, basePath: options.basePath)
        self.options = options
        self.logger = logger
        self.deadProperties = deadProperties
        self.locks = LockTable()
        self.htpasswd = try options.htpasswdFile.map { try HTPasswd(path: $0) }
    }

    /// Whether the request may go ahead: no authentication configured, or Basic credentials that
    /// match the user and password or an htpasswd entry.
    func authenticated(_ request: Request) -> Bool {
        if let credentials = options.credentials { return BasicAuthorization.accepts(request.headers[.authorization], credentials) }
        if let htpasswd {
            guard let (user, password) = BasicAuthorization.decode(request.headers[.authorization]) else { return false }
            return htpasswd.accepts(user: user, password: password)
        }
        return true
    }

    /// The `DAV` compliance class (a coded URL, RFC 4918 section 10.1) for "a PUT is atomic".
    static let atomicPutClass = "<urn:gateway:dav:atomic-put>"

    static let changingMethods: Set<String> = ["PUT", "DELETE", "MKCOL", "COPY", "MOVE", "PROPPATCH", "LOCK", "UNLOCK"]

    /// The response to one request, and the access-log line for it (no credentials, no query).
    func respond(to request: Request) async -> Response {
        let started = ContinuousClock.now
        let method = request.method.rawValue
        let response: Response
        do {
            response = try await dispatch(request, method: method)
        } catch {
            response = Self.failure(error)
        }
        let elapsed = ContinuousClock.now - started
        logger.info("\(method) \(request.uri.path) \(response.status.code)",
                    metadata: ["ms": "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)"])
        return response
    }

    /// Whether a request that waits for `100 Continue` will be handled (authenticated, a path
    /// inside the root, not refused as a change to a read-only server).
    func acceptsBody(of request: Request) -> Bool {
        guard authenticated(request) else { return false }
        guard paths.remote(forRequestPath: request.uri.path) != nil else { return false }
        return !(options.readOnly && Self.changingMethods.contains(request.method.rawValue))
    }

    private func dispatch(_ request: Request, method: String) async throws -> Response {
        if !authenticated(request) {
            var headers = HTTPFields()
            headers[.wwwAuthenticate] = "Basic realm=\"gateway\", charset=\"UTF-8\""
            return Self.plain(.unauthorized, "authentication required", headers: headers)
        }
        guard let path = paths.remote(forRequestPath: request.uri.path) else {
            return Self.plain(.notFound, "not found")
        }
        if options.readOnly, Self.changingMethods.contains(method) {
            return Self.plain(.forbidden, "this server is read-only")
        }
        if let refused = try await lockGate(request, method: method, path: path) { return refused }
        switch method {
        case "OPTIONS": return options(path)
        case "PROPFIND": return try await propfind(request, path: path)
        case "PROPPATCH" where deadProperties != nil: return try await proppatch(request, path: path)
        case "GET": return try await get(request, path: path, head: false)
        case "HEAD": return try await get(request, path: path, head: true)
        case "PUT": return try await put(request, path: path)
        case "DELETE": return try await delete(request, path: path)
        case "MKCOL": return try await mkcol(request, path: path)
        case "COPY": return try await copyOrMove(request, path: path, move: false)
        case "MOVE": return try await copyOrMove(request, path: path, move: true)
        case "LOCK": return try await lock(request, path: path)
        case "UNLOCK": return unlock(request, path: path)
        default:
            var headers = HTTPFields()
            headers[.allow] = allowed
            return Self.plain(.methodNotAllowed, "method not allowed", headers: headers)
        }
    }

    var allowed: String {
        "OPTIONS, GET, HEAD, PUT, DELETE, MKCOL, COPY, MOVE, PROPFIND, LOCK, UNLOCK" + (deadProperties == nil ? "" : ", PROPPATCH")
    }

    private func options(_ path: String) -> Response {
        var headers = HTTPFields()
        // Class 2 (locks) is what makes macOS Finder and Windows mount a share writable. The
        // coded URL says a PUT appears whole or not at all (every provider writes atomically), so a
        // gateway client PUTs files straight to their names instead of a temporary name and MOVE.
        headers[HTTPField.Name("DAV")!] = options.readOnly ? "1" : "1, 2, \(Self.atomicPutClass)"
        headers[.allow] = allowed
        headers[HTTPField.Name("MS-Author-Via")!] = "DAV"
        headers[.contentLength] = "0"
        return Response(status: .ok, headers: headers, body: ResponseBody())
    }

    /// The item at `path`, or `nil` when there is none.
    func item(_ path: String) async throws -> FileObject? {
        do {
            return try await provider.attributesOfItem(path: path)
        } catch where error.failureKind == .notFound || error.failureKind == .notADirectory {
            return nil
        }
    }

    // MARK: - Responses

    /// A short plain-text response (none for 204 and 304, which never carry a body: a client
    /// would read the text as the next response).
    static func plain(_ status: HTTPResponse.Status, _ text: String, headers: HTTPFields = HTTPFields()) -> Response {
        if status == .noContent || status == .notModified { return Response(status: status, headers: headers, body: ResponseBody()) }
        var headers = headers
        let body = ByteBuffer(string: text + "\n")
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.contentLength] = String(body.readableBytes)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    /// The response for a provider's error: the status its failure kind maps to.
    static func failure(_ error: any Error) -> Response {
        let reason = ErrorMessage.reason(for: error)
        switch error.failureKind {
        case .notFound: return plain(.notFound, "not found")
        case .permissionDenied, .notAuthenticated: return plain(.forbidden, reason)
        case .alreadyExists: return plain(.preconditionFailed, reason)
        case .noSpace: return plain(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), reason)
        case .notADirectory: return plain(.conflict, reason)
        case .isADirectory: return plain(.methodNotAllowed, reason)
        case .directoryNotEmpty, .conflict: return plain(.conflict, reason)
        case .invalidInput: return plain(.badRequest, reason)
        case .unsupported: return plain(.notImplemented, reason)
        case .versionMismatch: return plain(.preconditionFailed, reason)
        case .locked: return plain(HTTPResponse.Status(code: 423, reasonPhrase: "Locked"), reason)
        case .cancelled: return plain(HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request"), reason)
        case .timedOut, .connectionLost, .serverBusy: return plain(.serviceUnavailable, reason)
        default: return plain(.badGateway, reason)
        }
    }

    /// The entity tag of an item: its version tag (quoted) where the remote has one, else a weak
    /// tag of its size and modification time.
    static func etag(_ item: FileObject) -> String {
        if let tag = item.versionTag, !tag.isEmpty {
            return tag.hasPrefix("\"") || tag.hasPrefix("W/\"") ? tag : "\"\(tag.replacingOccurrences(of: "\"", with: ""))\""
        }
        let time = item.modificationDate.map { Int64(saturating: $0.timeIntervalSince1970 * 1000) } ?? 0
        return "W/\"\(item.size ?? 0)-\(time)\""
    }
}

/// `Authorization: Basic` checking.
enum BasicAuthorization {
    /// The user and password of a `Basic` header.
    static func decode(_ header: String?) -> (user: String, password: String)? {
        guard let header, header.count < 8192 else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    static func accepts(_ header: String?, _ credentials: (user: String, password: String)) -> Bool {
        guard let (userText, passwordText) = decode(header) else { return false }
        let user = Array(userText.utf8), password = Array(passwordText.utf8)
        // Both compared in full whatever the first gives (no early exit to time).
        let userMatches = constantTimeEqual(user, Array(credentials.user.utf8))
        let passwordMatches = constantTimeEqual(password, Array(credentials.password.utf8))
        return userMatches && passwordMatches
    }

    /// Equality whose time does not depend on where the first difference is.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
