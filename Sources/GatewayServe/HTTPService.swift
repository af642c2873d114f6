import Foundation
import GatewayCore
import HTTPTypes
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdTLS
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// The HTTP server every `gateway serve` mode runs: HummingbirdCore's server (SwiftNIO) at the
/// level where a request can be answered `100 Continue`, with graceful shutdown on SIGTERM and
/// SIGINT. HTTP/1.1 in the clear, or with a certificate TLS, where clients that offer it (ALPN
/// `h2`) get HTTP/2 and the others HTTP/1.1.
enum HTTPService {
    /// A certificate chain and its private key, PEM files.
    struct TLSFiles: Sendable, Equatable {
        var certificate: String
        var key: String
    }

    /// The TLS configuration of `files`: TLS 1.2 and later, HTTP/2 and HTTP/1.1 offered by ALPN.
    ///
    /// - Throws: a `CocoaError` naming the file that cannot be read or is not PEM.
    static func tlsConfiguration(_ files: TLSFiles) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(files.certificate)
        } catch {
            throw CocoaError.described(.fileReadCorruptFile, path: files.certificate,
                                       reason: "not a PEM certificate chain (--tls-cert): \(error)")
        }
        guard !chain.isEmpty else {
            throw CocoaError.described(.fileReadCorruptFile, path: files.certificate, reason: "no certificate in the file (--tls-cert)")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: files.key, format: .pem)
        } catch {
            throw CocoaError.described(.fileReadCorruptFile, path: files.key, reason: "not a PEM private key (--tls-key): \(error)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }

    /// Serves `respond` on `host:port` until SIGTERM or SIGINT (or the calling task is
    /// cancelled), then stops accepting connections and lets the requests in flight finish.
    /// `acceptsBody` says whether a request waiting for `100 Continue` gets it.
    static func run(host: String, port: Int, tls: TLSFiles? = nil, logger: Logger,
                    acceptsBody: @escaping @Sendable (Request) -> Bool,
                    respond: @escaping @Sendable (Request) async -> Response,
                    onListening: @escaping @Sendable (Int) async -> Void) async throws {
        var serverLogger = logger
        // HummingbirdCore reports a cancelled shutdown (SIGTERM) as an error; bind failures are thrown.
        serverLogger.logLevel = .critical
        let builder = try tls.map { try HTTPServerBuilder.http2Upgrade(tlsConfiguration: tlsConfiguration($0)) } ?? .http1()
        let server = try builder.buildServer(
            configuration: ServerConfiguration(address: .hostname(host, port: port), serverName: "gateway"),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: serverLogger,
            responder: { request, responseWriter, channel in
                if request.headers[.expect]?.lowercased() == "100-continue", acceptsBody(request) {
                    try await responseWriter.writeInformationalHead(HTTPResponse(status: .continue))
                }
                var response = await respond(request)
                response.headers[.date] = ServeText.httpDate(Date())
                response.headers[.server] = "gateway"
                // Large bodies wait for the socket even when the event loop is short of CPU.
                try await responseWriter.write(response: response.head, body: response.body.paced(on: channel.eventLoop))
            },
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) }
        )
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: serverLogger))
        try await group.run()
    }
}
