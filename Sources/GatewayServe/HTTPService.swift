import Foundation
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The HTTP/1.1 server every `gateway serve` mode runs: HummingbirdCore's server (SwiftNIO) at
/// the level where a request can be answered `100 Continue`, with graceful shutdown on SIGTERM
/// and SIGINT.
enum HTTPService {
    /// Serves `respond` on `host:port` until SIGTERM or SIGINT (or the calling task is
    /// cancelled), then stops accepting connections and lets the requests in flight finish.
    /// `acceptsBody` says whether a request waiting for `100 Continue` gets it.
    static func run(host: String, port: Int, logger: Logger,
                    acceptsBody: @escaping @Sendable (Request) -> Bool,
                    respond: @escaping @Sendable (Request) async -> Response,
                    onListening: @escaping @Sendable (Int) async -> Void) async throws {
        var serverLogger = logger
        // HummingbirdCore reports a cancelled shutdown (SIGTERM) as an error; bind failures are thrown.
        serverLogger.logLevel = .critical
        let server = try HTTPServerBuilder.http1().buildServer(
            configuration: ServerConfiguration(address: .hostname(host, port: port), serverName: "gateway"),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: serverLogger,
            responder: { request, responseWriter, _ in
                if request.headers[.expect]?.lowercased() == "100-continue", acceptsBody(request) {
                    try await responseWriter.writeInformationalHead(HTTPResponse(status: .continue))
                }
                var response = await respond(request)
                response.headers[.date] = ServeText.httpDate(Date())
                response.headers[.server] = "gateway"
                try await responseWriter.write(response: response.head, body: response.body)
            },
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) }
        )
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: serverLogger))
        try await group.run()
    }
}
