public import Foundation
public import GatewayCore
import GatewayState
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
// Not final: `WebDAVProviderWithLinks` (in `+Sharing`) adds public links when the configuration has a
// `links` object, so that `as? FileProviderSharing` succeeds only then. Its state is immutable or
// behind locks, hence `@unchecked Sendable` (a non-final class cannot be checked).
public class WebDAVProvider: FileProviderBasic, FileProviderOperations, FileProviderReadWrite, FileProviderHashing, @unchecked Sendable {
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

    /// Whether small files may be written with one `PUT` to their name (no temporary name and
    /// `MOVE`), which is only safe where the server's `PUT` is itself atomic.
    public enum AtomicPut: String, Sendable, CaseIterable {
        /// Learn it from the server (``serverPutIsAtomic()``): Apache httpd 2.4+ with mod_dav_fs.
        case auto
        /// The server is known to store a `PUT` atomically.
        case always
        /// Always upload under a temporary name and `MOVE` it into place.
        case never
    }

    /// The `atomic_put` setting.
    public let atomicPut: AtomicPut

    /// Whether change monitoring asks folders for their changes since a sync token (RFC 6578
    /// `sync-collection`) instead of listing them.
    public enum SyncCollection: String, Sendable, CaseIterable {
        /// Where the server answers the report and its deltas are seen to name member folders.
        case auto
        /// Wherever the server answers the report, even where it cannot be seen to name member
        /// folders (a server that leaves them out, such as Xandikos, on a tree without folders).
        case always
        /// Always list folders.
        case never
    }

    /// The `sync_collection` setting.
    public let syncCollection: SyncCollection
    /// The `dead_properties` setting: whether uploads also record their ``SourceStamp`` on the server,
    /// in a dead property (plain WebDAV only), besides the local record every upload makes.
    public let deadProperties: Bool
    /// Whether the server was seen to keep the gateway's dead property (`nil` until first written).
    let learnedDeadProperties = Mutex<Bool?>(nil)
    /// The source stamps of this machine's uploads (plain WebDAV), kept in the local state store.
    let localStamps: LocalStamps
    /// The `trash` and `trash_dir` keys: whether and where removals and overwrites are kept (``trash``).
    public let trashSettings: TrashSettings
    /// Nextcloud's or ownCloud's own trash bin, the ``trash`` of such a remote unless `trash_dir`
    /// asks for a trash folder (`nil` otherwise).
    let serverTrashbin: ServerTrashbin?
    /// What `auto` learned from the server, once asked.
    let learnedAtomicPut = Mutex<Bool?>(nil)
    /// Whether walks may begin with `PROPFIND Depth: infinity`: `false` once the server refused
    /// one or answered it with fewer levels than the tree has (``walk(path:pageSize:)``).
    let usesInfiniteDepth = Mutex(true)
    /// The characters the server changes in a name given in `Destination`, once probed
    /// (``destinationChangedCharacters(in:folder:)``), for files (`false`) and folders (`true`):
    /// Xandikos decodes a file's `Destination`, not a folder's.
    let learnedDestinationChanges = Mutex<[Bool: Set<Character>]>([:])
    /// Held while a `Destination` probe runs.
    let destinationProbeLock = AsyncLock()
    /// Whether the server answers `sync-collection` reports (RFC 6578), once asked.
    let syncCollectionSupport = Mutex(FolderDeltaSupport.unknown)

    let client: HTTPClient
    let paths: WebDAVPath
    let logger: Logger
    /// The folder of the local state store (change-monitor snapshots); see ``StateLocation``.
    public let stateDirectory: URL
    /// Identifies this remote's state: the base URL and the user, never a secret.
    public let monitorIdentity: String

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - configuration: where and how to connect (the base URL must not contain credentials).
    ///   - vendor: the server flavour.
    ///   - rangedUploads: let large copies upload in byte ranges at once where the server takes them.
    ///   - atomicPut: whether small files may go with one `PUT` to their name (``AtomicPut``).
    ///   - syncCollection: how change monitoring asks for changes (``SyncCollection``).
    ///   - deadProperties: whether uploads also record their ``SourceStamp`` in a dead property on
    ///     the server, for trees written from several machines (plain WebDAV; every upload records
    ///     it in the local state store).
    ///   - trash: the `trash` and `trash_dir` settings.
    ///   - stateDirectory: the local state store's folder.
    ///   - logger: where requests and decisions are logged.
    public init(configuration: HTTPClientConfiguration, vendor: Vendor = .other, rangedUploads: Bool = true,
                atomicPut: AtomicPut = .auto, syncCollection: SyncCollection = .auto, deadProperties: Bool = false,
                trash: TrashSettings = TrashSettings(),
                stateDirectory: URL = StateLocation.directory(),
                logger: Logger = Logger(label: "gateway.webdav")) {
        self.name = configuration.remoteName
        self.trashSettings = trash
        self.serverTrashbin = trash.enabled && trash.folder == nil
            ? ServerTrashbin(configuration: configuration, vendor: vendor, stateDirectory: stateDirectory, logger: logger) : nil
        self.stateDirectory = stateDirectory
        self.atomicPut = atomicPut
        self.syncCollection = syncCollection
        self.deadProperties = deadProperties
        self.vendor = vendor
        self.rangedUploads = rangedUploads
        self.paths = WebDAVPath(baseURL: configuration.baseURL)
        var clientConfiguration = configuration
        clientConfiguration.baseURL = paths.baseURL
        self.client = HTTPClient(configuration: clientConfiguration, logger: logger)
        self.monitorIdentity = "webdav \(paths.baseURL.absoluteString) user=\(configuration.user ?? "")"
        self.localStamps = LocalStamps(directory: stateDirectory, identity: monitorIdentity, logger: logger)
        self.logger = logger
        var features: ProviderCapabilities.Features = [
            .serverSideCopy, .serverSideMove, .rangedRead, .conditionalWrite,
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
        FileProviderHTTPError(statusCode: head.status, path: path, serverText: Self.serverText(body), retryAfter: head.retryAfter,
                              method: head.method)
    }

    /// A readable excerpt of an error body, one short line: an HTML page gives its `<title>`
    /// (Apache's "409 Conflict"), other text its tags stripped and whitespace folded, at most 160
    /// characters. The page itself stays out of messages.
    static func serverText(_ body: Data) -> String? {
        guard !body.isEmpty else { return nil }
        let head = String(decoding: body.prefix(4096), as: UTF8.self)
        if let open = head.range(of: "<title>", options: .caseInsensitive),
           let close = head.range(of: "</title>", options: .caseInsensitive, range: open.upperBound..<head.endIndex) {
            let title = head[open.upperBound..<close.lowerBound].split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
            return title.isEmpty ? nil : String(title.prefix(160))
        }
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
        return folded.isEmpty ? nil : String(folded.prefix(160))
    }

    /// Where a redirect answer (3xx with `Location`) points, when it stays on the configured origin
    /// (scheme, host and port): the request is then sent there, with the remote's credentials.
    /// Anywhere else fails with the redirect's status and its target's origin named, and no
    /// request (so no credential) goes there.
    func redirectTarget(_ head: HTTPResponseHead, from url: URL, path: String) throws -> URL {
        guard let location = head.header("location"), let target = URL(string: location, relativeTo: url)?.absoluteURL else {
            throw FileProviderHTTPError(statusCode: head.status, path: path, serverText: "redirect without a usable Location")
        }
        guard HTTPClient.origin(of: target) == HTTPClient.origin(of: baseURL) else {
            throw FileProviderHTTPError(statusCode: head.status, path: path,
                                        serverText: "redirect to another origin (\(HTTPClient.origin(of: target))) not followed")
        }
        return target
    }

    /// An error for "already exists", as every provider reports it.
    func existsError(_ path: String) -> CocoaError {
        CocoaError.posix(EEXIST, path: path, remote: name, writing: true)
    }

    /// The failure a 207 answer to DELETE, COPY or MOVE reports, if any (RFC 4918 §9.6.1: a
    /// collection's members that could not be deleted are listed with their own status): one failed
    /// member is that member's error; several give an error on `path` that names each (the first
    /// ten) with its status.
    func multistatusFailure(_ body: Data, path: String, method: String) throws -> FileProviderHTTPError? {
        let parser = MultistatusParser()
        try parser.feed(body, path: path)
        try parser.finish(path: path)
        var named: [FileProviderHTTPError] = []  // the first ten failures; the rest only counted
        var count = 0
        for resource in parser.drain() {
            if let status = resource.status, !(200..<300).contains(status) {
                count += 1
                guard named.count < 10 else { continue }
                let item = paths.remotePath(fromHref: resource.href, requestPath: path) ?? path
                named.append(FileProviderHTTPError(statusCode: status, path: item, serverText: resource.description, method: method))
            }
        }
        guard let first = named.first else { return nil }
        if count == 1 { return first }
        let list = named.map { "\($0.path) (\($0.statusCode) \($0.reasonPhrase))" }.joined(separator: ", ")
        let more = count > named.count ? " and \(count - named.count) more" : ""
        return FileProviderHTTPError(statusCode: first.statusCode, path: path, serverText: "\(count) items failed: \(list)\(more)",
                                     method: method)
    }
}
