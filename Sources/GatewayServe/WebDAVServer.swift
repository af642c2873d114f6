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

    /// A server for the folder `root` of `provider`; `logger` gets one access line per request
    /// (at `info`). Throws when the `htpasswd` file or the TLS files cannot be used, naming them.
    /// With a `stateDirectory` (the local state store, ``StateLocation``), `PROPPATCH`
    /// keeps dead properties there (`properties.sqlite`); without one it is not offered.
    public init(provider: any FileProviderBasic, root: String, options: WebDAVServeOptions, logger: Logger,
                stateDirectory: URL? = nil) throws {
        let store = try stateDirectory.map { try DeadPropertyStore.open(directory: $0, scope: provider.baseURL.absoluteString) }
        // The certificate and key are read now, so a bad file fails at start with its name.
        if let files = options.tlsFiles { _ = try HTTPService.tlsConfiguration(files) }
        self.handler = try WebDAVHandler(provider: provider, root: root, options: options, logger: logger, deadProperties: store)
        self.options = options
        self.logger = logger
    }

    /// Serves until SIGTERM or SIGINT (or the calling task is cancelled), then stops accepting
    /// connections and lets the requests in flight finish. `onListening` gets the bound port
    /// (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let handler = self.handler
        // A client that waits for `100 Continue` before sending a body gets it once the request
        // is known to go ahead (authenticated, a path inside the root).
        try await HTTPService.run(host: options.host, port: options.port, tls: options.tlsFiles, logger: logger,
                                  acceptsBody: { handler.acceptsBody(of: $0) },
                                  respond: { await handler.respond(to: $0) },
                                  onListening: onListening)
    }
}
