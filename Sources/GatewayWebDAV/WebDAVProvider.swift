public import Foundation
public import GatewayCore
public import GatewayTransport
public import Logging
import Synchronization

/// A remote on a WebDAV server (RFC 4918), through libcurl with pooled keep-alive connections and
/// streamed bodies; 207 Multi-Status answers are parsed as they arrive (libxml2 SAX).
///
/// Organised like every backend: this file (configuration, requests, errors), `+Listing` (PROPFIND:
/// listing, stat, quota, stored checksums), `+Reading` (GET), `+Writing` (PUT, atomic via a temporary name and MOVE),
/// `+RangedUpload` (large files as several ranged PUTs at once),
/// `+Operations` (MKCOL, COPY, MOVE, DELETE), `+Descriptor` (config keys).
public final class WebDAVProvider: FileProviderBasic, FileProviderOperations, FileProviderReadWrite, FileProviderHashing {
    public static let type = "webdav"

    /// Server flavours with extensions beyond RFC 4918.
    public enum Vendor: String, Sendable, CaseIterable {
        /// Plain RFC 4918.
        case other
        /// Nextcloud: `X-OC-Mtime` sets modification times; `OC-Checksum` headers and the
        /// `oc:checksums` property carry stored SHA-1/MD5 hashes.
        case nextcloud
        /// ownCloud: as Nextcloud.
        case owncloud
    }

    public let name: String
    public var baseURL: URL { paths.baseURL }
    public let capabilities: ProviderCapabilities
    /// The server flavour.
    public let vendor: Vendor
    /// Whether large copies may upload a file as several byte ranges at once (`PUT` with
    /// `Content-Range`), where the server is found to take them.
    public let rangedUploads: Bool
    /// Set once the server refused or ignored a ranged `PUT`: later files skip the probe.
    let rangedUploadsRefused = Mutex(false)

    let client: HTTPClient
    let paths: WebDAVPath
    let logger: Logger

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - configuration: where and how to connect (the base URL must not contain credentials).
    ///   - vendor: the server flavour.
    ///   - rangedUploads: let large copies upload in byte ranges at once where the server takes them.
    public init(configuration: HTTPClientConfiguration, vendor: Vendor = .other, rangedUploads: Bool = true,
                logger: Logger = Logger(label: "gateway.webdav")) {
        self.name = configuration.remoteName
        self.vendor = vendor
        self.rangedUploads = rangedUploads
        self.paths = WebDAVPath(baseURL: configuration.baseURL)
        var clientConfiguration = configuration
        clientConfiguration.baseURL = paths.baseURL
        self.client = HTTPClient(configuration: clientConfiguration, logger: logger)
        self.logger = logger
        var features: ProviderCapabilities.Features = [
            .serverSideCopy, .serverSideMove, .rangedRead, .resumeDownload, .atomicWrite, .conditionalWrite,
            .modificationTimes,
        ]
        if vendor != .other { features.insert(.setModificationDate) }
        self.capabilities = ProviderCapabilities(features: features,
                                                 hashAlgorithms: vendor == .other ? [] : Set(OwnCloudChecksums.supported),
                                                 modificationTimePrecision: .seconds(1))
    }

    public func url(of path: String) throws -> URL {
        paths.url(try RemotePath.normalize(path))
    }

    public func relativePathOf(url: URL) throws -> String {
        guard url.scheme == baseURL.scheme, url.host == baseURL.host, url.port == baseURL.port,
              let remote = paths.remotePath(fromHref: url.absoluteString, requestPath: "/") else {
            throw FileProviderError.pathEscapesRoot(path: url.path)
        }
        return remote
    }

    // MARK: Requests and errors

    /// Sends a request whose answer is small, and returns status, headers and body.
    func send(_ method: String, _ path: String, folder: Bool = false, headers: [(name: String, value: String)] = [],
              body: HTTPRequest.Body = .none, requestBuffer: Int = HTTPClient.bufferCapacity) async throws -> (HTTPResponseHead, Data) {
        var request = HTTPRequest(method: method, url: paths.url(path, folder: folder), path: path, headers: headers, body: body)
        request.requestBuffer = requestBuffer
        return try await client.send(request)
    }

    /// The error for an unsuccessful answer: ``FileProviderHTTPError`` with the status, the path and
    /// the server's text.
    func failure(_ head: HTTPResponseHead, body: Data, path: String) -> FileProviderHTTPError {
        FileProviderHTTPError(statusCode: head.status, path: path, serverText: Self.serverText(body), retryAfter: head.retryAfter)
    }

    /// A readable excerpt of an error body: tags stripped, whitespace folded.
    static func serverText(_ body: Data) -> String? {
        guard !body.isEmpty else { return nil }
        // Tags are dropped by hand: Foundation's regular expressions are not safe to use from many
        // threads at once on Linux.
        var text = ""
        var inTag = false
        for character in String(decoding: body.prefix(4096), as: UTF8.self) {
            switch character {
            case "<": inTag = true; text.append(" ")
            case ">": inTag = false
            default: if !inTag { text.append(character) }
            }
        }
        let folded = text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return folded.isEmpty ? nil : String(folded.prefix(300))
    }

    /// An error for "already exists", as every provider reports it.
    func existsError(_ path: String) -> CocoaError {
        CocoaError.posix(EEXIST, path: path, remote: name, writing: true)
    }

    /// The first failed item of a 207 answer to DELETE, COPY or MOVE, if any.
    func firstFailure(inMultistatus body: Data, path: String) throws -> FileProviderHTTPError? {
        let parser = MultistatusParser()
        try parser.feed(body, path: path)
        try parser.finish(path: path)
        for resource in parser.drain() {
            if let status = resource.status, !(200..<300).contains(status) {
                let item = paths.remotePath(fromHref: resource.href, requestPath: path) ?? path
                return FileProviderHTTPError(statusCode: status, path: item, serverText: resource.description)
            }
        }
        return nil
    }
}
