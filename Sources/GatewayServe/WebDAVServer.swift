public import Foundation
public import GatewayCore
import GatewayServeRequests
import GatewayState
public import Logging

/// A WebDAV server (RFC 4918, classes 1 and 2) over any provider: `gateway serve webdav`.
///
/// Bodies stream both ways: a `GET` is the provider's read stream, a `PUT` goes into the
/// provider's atomic write as it arrives (nothing appears under the name unless every byte came),
/// and a `PROPFIND` of a folder is written as the folder is listed. Built on HummingbirdCore's
/// HTTP/1.1 server (SwiftNIO), at the level where a request can be answered `100 Continue`.
public struct WebDAVServer: Sendable {
    private let handler: WebDAVHandler
    private let options: WebDAVServeOptions
    private let logger: Logger
    /// Public links answered by the same listener (`--links`), without the server's authentication.
    private let links: LinkHandler?

    /// A server for the folder `root` of `provider`; `logger` gets one access line per request
    /// (at `info`). Throws when the `htpasswd` file or the TLS files cannot be used, naming them.
    /// With a `stateDirectory` (the local state store, ``StateLocation``), `PROPPATCH`
    /// keeps dead properties there (`properties.sqlite`); without one it is not offered.
    ///
    /// With `links` (a ``PublicLinkServer`` made for the same configuration), requests under its
    /// ``PublicLinkServer/prefix`` are public links, answered as `gateway serve links` answers them
    /// (no authentication: the token is the credential), and everything else is WebDAV: one
    /// listener for both. An item of the served folder at that path is then out of reach.
    public init(provider: any FileProviderBasic, root: String, options: WebDAVServeOptions, logger: Logger,
                stateDirectory: URL? = nil, links: PublicLinkServer? = nil) throws {
        self.links = links?.handler
        let store = try stateDirectory.map { try DeadPropertyStore.open(directory: $0, scope: provider.baseURL.absoluteString) }
        // The certificate and key are read now, so a bad file fails at start with its name.
        if let files = options.tlsFiles { _ = try HTTPService.tlsConfiguration(files) }
        var handler = try WebDAVHandler(provider: provider, root: root, options: options, logger: logger, deadProperties: store)
        // A browser's view of a folder is the share page: the served folder's name heads it.
        let name = RemotePath.lastComponent(of: handler.paths.root)
        // The links' settings where there are links (one preview cache for both), else the defaults.
        handler.browser = ShareBrowser(provider: provider, paths: handler.paths, title: name.isEmpty ? provider.baseURL.host ?? "Files" : name,
                                       zipLimit: links.map { $0.handler.zipLimit } ?? LinksConfiguration.defaultZipLimit,
                                       thumbnails: links?.handler.thumbnails
                                           ?? stateDirectory.map { ThumbnailCache(directory: $0.appendingPathComponent("thumbnails")) },
                                       cacheScope: provider.baseURL.absoluteString, publicShare: false, logger: logger)
        self.handler = handler
        self.options = options
        self.logger = logger
    }

    /// Serves until SIGTERM or SIGINT (or the calling task is cancelled), then stops accepting
    /// connections and lets the requests in flight finish. `onListening` gets the bound port
    /// (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let handler = self.handler, links = self.links
        // A client that waits for `100 Continue` before sending a body gets it once the request
        // is known to go ahead (authenticated, a path inside the root); links take no body.
        try await HTTPService.run(host: options.host, port: options.port, tls: options.tlsFiles, logger: logger,
                                  acceptsBody: { request in
                                      if let links, links.claims(request) { return false }
                                      return handler.acceptsBody(of: request)
                                  },
                                  respond: { request in
                                      if let links, links.claims(request) { return await links.respond(to: request) }
                                      return await handler.respond(to: request)
                                  },
                                  onListening: onListening)
    }
}
