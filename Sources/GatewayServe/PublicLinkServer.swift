public import Foundation
public import GatewayCore
import GatewayState
import HTTPTypes
import HummingbirdCore
public import Logging
import NIOCore

/// The server public links point at (`gateway serve links`): `GET` and `HEAD` of
/// `BASE_PATH/s/TOKEN/NAME`, for any remote of the configuration, without the remote's
/// credentials.
///
/// A link serves only its item: a file (with ranges and conditional requests), or a folder as a
/// small HTML index and the files below it, nothing above. The token is checked before the remote
/// is touched, so the answers say nothing of whether a path exists: a bad signature is 403, an
/// expired link 410, a revoked one (``LinkRevocations``) 404 like a missing item.
public struct PublicLinkServer: Sendable {
    /// Also what `gateway serve webdav --links` routes link paths to.
    let handler: LinkHandler
    private let host: String
    private let port: Int
    private let tls: HTTPService.TLSFiles?
    private let logger: Logger

    /// A server for the links of `configuration` (its `links` object), resolving remotes through
    /// `resolver`; revocations are read from the state folder `stateDirectory`. With a certificate
    /// and key (PEM files), HTTPS with HTTP/2 for clients that offer it.
    ///
    /// - Throws: ``ConfigError`` when the configuration has no `links` or its secret cannot be
    ///   resolved; a state-store error when the revocations cannot be opened.
    public init(resolver: RemoteResolver, configuration: GatewayConfiguration, stateDirectory: URL, environment: [String: String],
                host: String = "127.0.0.1", port: Int = 8080, tlsCertificateFile: String? = nil, tlsKeyFile: String? = nil,
                logger: Logger) throws {
        guard let links = configuration.links else {
            throw ConfigError(source: configuration.source ?? "(no config file found)", key: "links",
                              message: "no \"links\" object: add one with base_url and secret_env (see docs/links.md)")
        }
        self.handler = LinkHandler(resolver: resolver, secret: try links.secret(environment: environment), prefix: links.serverPrefix,
                                   revocations: try LinkRevocations.open(directory: stateDirectory), zipLimit: links.zipMaximumBytes,
                                   thumbnails: ThumbnailCache(directory: stateDirectory.appendingPathComponent("thumbnails"),
                                                              limit: links.thumbnailCacheMaximumBytes),
                                   logger: logger)
        self.host = host
        self.port = port
        if let tlsCertificateFile, let tlsKeyFile {
            let files = HTTPService.TLSFiles(certificate: tlsCertificateFile, key: tlsKeyFile)
            _ = try HTTPService.tlsConfiguration(files)
            self.tls = files
        } else {
            self.tls = nil
        }
        self.logger = logger
    }

    /// The path links are answered under (`/s/`, or the base URL's path and `/s/`).
    public var prefix: String { handler.prefix }

    /// Serves until SIGTERM or SIGINT (or the calling task is cancelled); `onListening` gets the
    /// bound port.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let handler = self.handler
        try await HTTPService.run(host: host, port: port, tls: tls, logger: logger, acceptsBody: { _ in false },
                                  respond: { await handler.respond(to: $0) }, onListening: onListening)
    }
}

/// Answers one request for a public link.
struct LinkHandler: Sendable {
    let resolver: RemoteResolver
    let secret: [UInt8]
    /// `/s/` or `/BASE/s/`.
    let prefix: String
    let revocations: LinkRevocations
    /// The largest folder "Download all" zips (`links.zip_max_bytes`); `nil`: none.
    let zipLimit: Int64?
    /// Previews already made (`links.thumbnail_cache_max_bytes`).
    let thumbnails: ThumbnailCache
    let logger: Logger

    /// Whether `request` is for a link (its path is under ``prefix``).
    func claims(_ request: Request) -> Bool {
        request.uri.path.hasPrefix(prefix)
    }

    func respond(to request: Request) async -> Response {
        let started = ContinuousClock.now
        var response = await answer(request)
        // A browser gets a page that says why a link leads nowhere, in plain words.
        if [403, 404, 410].contains(response.status.code), ShareBrowser.wantsPage(request),
           response.headers[.contentType]?.hasPrefix("text/plain") == true {
            response = ShareBrowser.messagePage(response.status, head: request.method == .head)
        }
        // A shared file is someone else's content on this origin: no scripts, no sniffing, no
        // referrer carrying the token elsewhere, no search engines. Pages carry their own policy.
        let policy = HTTPField.Name("Content-Security-Policy")!
        if response.headers[policy] == nil {
            response.headers[policy] = "sandbox; default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'"
        }
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[HTTPField.Name("X-Robots-Tag")!] = "noindex, nofollow"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "private, no-cache" }
        let elapsed = ContinuousClock.now - started
        // The token is the credential: the log shows its first characters only.
        logger.info("\(request.method.rawValue) \(Self.redacted(request.uri.path, prefix: prefix)) \(response.status.code)",
                    metadata: ["ms": "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)"])
        return response
    }

    private func answer(_ request: Request) async -> Response {
        let method = request.method.rawValue
        guard method == "GET" || method == "HEAD" else {
            var headers = HTTPFields()
            headers[.allow] = "GET, HEAD"
            return WebDAVHandler.plain(.methodNotAllowed, "links are read with GET and HEAD", headers: headers)
        }
        var raw = Substring(request.uri.path)
        if let query = raw.firstIndex(of: "?") { raw = raw[..<query] }
        guard raw.hasPrefix(prefix) else { return WebDAVHandler.plain(.notFound, "not found") }
        let rest = raw.dropFirst(prefix.count)
        let tokenText = rest.prefix { $0 != "/" }
        let remainder = rest.dropFirst(tokenText.count)
        let token: LinkToken
        switch LinkToken.verify(String(tokenText), secret: secret) {
        case .failure(.badSignature): return WebDAVHandler.plain(.forbidden, "this link is not valid")
        case .failure(.expired): return WebDAVHandler.plain(.gone, "this link has expired")
        case .success(let verified): token = verified
        }
        do {
            guard try !revocations.isRevoked(token) else { return WebDAVHandler.plain(.notFound, "not found") }
        } catch {
            logger.error("link revocations cannot be read: \(ErrorMessage.reason(for: error))")
            return WebDAVHandler.plain(.serviceUnavailable, "links cannot be checked now")
        }
        let provider: any FileProviderBasic
        do {
            provider = try await resolver.provider(named: token.remote)
        } catch {
            logger.warning("link to remote \(token.remote) not served: \(ErrorMessage.reason(for: error))")
            return WebDAVHandler.plain(.notFound, "not found")
        }
        do {
            guard let item = try await Self.item(token.path, of: provider) else { return WebDAVHandler.plain(.notFound, "not found") }
            // The first segment after the token is the item's name (none for a remote's root).
            let segments = remainder.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: true)
            let base = prefix + tokenText
            var servedPrefix = base
            if item.path != "/" {
                guard let first = segments.first else {
                    // The token alone: on to the link's full form, whose relative references work.
                    var headers = HTTPFields()
                    headers[.location] = base + "/" + (item.name.addingPercentEncoding(withAllowedCharacters: PublicLinks.segmentCharacters) ?? "")
                        + (item.isDirectory ? "/" : "")
                    return WebDAVHandler.plain(.movedPermanently, "moved", headers: headers)
                }
                guard String(first).removingPercentEncoding == item.name else { return WebDAVHandler.plain(.notFound, "not found") }
                servedPrefix = base + "/" + first
            }
            var handler = try WebDAVHandler(provider: provider, root: token.path,
                                            options: WebDAVServeOptions(basePath: servedPrefix, readOnly: true),
                                            logger: logger, deadProperties: nil)
            handler.browser = ShareBrowser(provider: provider, paths: handler.paths, title: item.path == "/" ? token.remote : item.name,
                                           zipLimit: zipLimit, thumbnails: thumbnails, cacheScope: token.remote, publicShare: true, logger: logger)
            if !item.isDirectory {
                // A file link serves the file and nothing below its name.
                guard !remainder.dropFirst().contains("/") else { return WebDAVHandler.plain(.notFound, "not found") }
                return try await handler.get(request, path: token.path, head: method == "HEAD")
            }
            guard let path = handler.paths.remote(forRequestPath: request.uri.path),
                  try await ShareBrowser.reachable(path, root: token.path, provider: provider) else {
                return WebDAVHandler.plain(.notFound, "not found")
            }
            return try await handler.get(request, path: path, head: method == "HEAD")
        } catch {
            let failure = WebDAVHandler.failure(error)
            // Whatever the remote says, a link does not tell more than "not found".
            return failure.status.code >= 500 ? failure : WebDAVHandler.plain(.notFound, "not found")
        }
    }

    private static func item(_ path: String, of provider: any FileProviderBasic) async throws -> FileObject? {
        do {
            return try await provider.attributesOfItem(path: path)
        } catch where error.failureKind == .notFound || error.failureKind == .notADirectory {
            return nil
        }
    }

    /// A request path with the token cut to its first 8 characters.
    static func redacted(_ path: String, prefix: String) -> String {
        guard path.hasPrefix(prefix) else { return path }
        let rest = path.dropFirst(prefix.count)
        let token = rest.prefix { $0 != "/" }
        return prefix + token.prefix(8) + (token.count > 8 ? "…" : "") + rest.dropFirst(token.count)
    }
}
