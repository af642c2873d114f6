public import Foundation
public import GatewayCore
public import GatewayTransport
public import Logging
import Synchronization

/// A remote on an FTP or FTPS server, through libcurl with a pool of logged-in control connections.
///
/// Organised like every backend: this file (configuration, paths, errors), `+Listing` (MLSD or LIST,
/// stat through MLST or SIZE/MDTM), `+Reading` (RETR with REST), `+Writing` (STOR, atomic via a
/// temporary name and RNFR/RNTO), `+Operations` (MKD, RNFR/RNTO, DELE, RMD, MFMT, SITE CPFR/CPTO),
/// `+Hashing` (XSHA1/XMD5/XSHA256 or HASH), `+Descriptor`
/// (config keys), and `Listing/` (the MLSD and LIST line parsers).
///
/// FTP has no quota (``storageProperties(path:)`` throws ``FileProviderError/unavailable(reason:path:)``)
/// and no copy of its own: ``copyItem(path:to:overwrite:progress:)`` uses `SITE CPFR`/`SITE CPTO`
/// where the server announces `SITE COPY`, and streams through the client otherwise.
// Not final: `FTPProviderWithLinks` (in `+Sharing`) adds public links when the configuration has a
// `links` object, so that `as? FileProviderSharing` succeeds only then. Its state is immutable or
// behind locks, hence `@unchecked Sendable` (a non-final class cannot be checked).
public class FTPProvider: FileProviderBasic, FileProviderOperations, FileProviderReadWrite, @unchecked Sendable {
    public static let type = "ftp"

    public let name: String
    public let baseURL: URL
    /// Whether `LIST -a` is sent instead of `LIST` (servers that hide dot files unless asked, as a
    /// stock vsftpd does); a server that refuses it gets a plain `LIST` from then on.
    public let listHidden: Bool
    /// Set once the server refused `LIST -a` and took a plain `LIST`.
    let hiddenListingRefused = Atomic<Bool>(false)

    /// The `trash` and `trash_dir` keys: whether and where removals and overwrites are kept (``trash``).
    public let trashSettings: TrashSettings
    let client: FTPClient
    let logger: Logger
    /// The folder of the local state store (change-monitor snapshots); see ``StateLocation``.
    public let stateDirectory: URL
    /// Identifies this remote's state: the server URL and the user, never a secret.
    public let monitorIdentity: String

    /// Creates a provider. Nothing is sent until the first operation.
    ///
    /// - Parameters:
    ///   - configuration: where and how to connect (the URL must not contain credentials).
    ///   - listHidden: send `LIST -a` to servers without MLSD, so dot files are listed too.
    public init(configuration: FTPClientConfiguration, listHidden: Bool = true, trash: TrashSettings = TrashSettings(),
                stateDirectory: URL = StateLocation.directory(),
                logger: Logger = Logger(label: "gateway.ftp")) {
        self.name = configuration.remoteName
        self.trashSettings = trash
        self.stateDirectory = stateDirectory
        self.monitorIdentity = "ftp \(configuration.baseURL.absoluteString) user=\(configuration.user ?? "")"
        self.baseURL = configuration.baseURL
        self.listHidden = listHidden
        self.client = FTPClient(configuration: configuration, logger: logger)
        self.logger = logger
    }

    /// What FTP offers. Setting modification times (MFMT), server-side copies (`SITE COPY`) and
    /// hashes (`HASH`, `XSHA1`...) depend on the server, and are declared once the first operation
    /// has read the server's features; before that they are not claimed.
    public var capabilities: ProviderCapabilities {
        var features: ProviderCapabilities.Features = [
            .serverSideMove, .rangedRead, .conditionalWrite, .modificationTimes,
        ]
        let known = client.knownSession?.features
        if known?.setModificationTime == true { features.insert(.setModificationDate) }
        if known?.serverSideCopy == true { features.insert(.serverSideCopy) }
        // LIST gives minutes (recent files) or days (older ones); MLSD gives seconds.
        let precision: Duration = known?.machineListings == true ? .seconds(1) : .seconds(60)
        return ProviderCapabilities(features: features, hashAlgorithms: known.map(Self.hashAlgorithms) ?? [],
                                    modificationTimePrecision: precision)
    }

    public func url(of path: String) throws -> URL { try RemotePath.url(of: path, below: baseURL) }

    public func relativePathOf(url: URL) throws -> String { try RemotePath.path(of: url, below: baseURL) }

    // MARK: Paths

    /// The absolute server path of a remote path. Names with control characters (tab, newline)
    /// cannot travel in FTP commands or libcurl's FTP paths, and are refused up front.
    func serverPath(_ remote: String) async throws -> String {
        if remote.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw FileProviderError.invalidPath(path: remote, reason: "FTP cannot carry control characters (such as a tab) in names")
        }
        let root = try await client.root()
        if root == "/" { return remote }
        return remote == "/" ? root : root + remote
    }

    /// The server's features (read once per provider).
    func features() async throws -> FTPFeatures { try await client.currentSession().features }

    // MARK: Errors

    /// An error for "already exists", as every provider reports it.
    func existsError(_ path: String) -> CocoaError {
        CocoaError.posix(EEXIST, path: path, remote: name, writing: true)
    }

    /// Makes an ambiguous refusal (550/553/450: "not found or no permission"?) precise by looking at
    /// the path: missing means not found; present means permission (or the wrong kind of item,
    /// when `expecting` says which kind the operation needed).
    func refine(_ error: any Error, path: String, expecting: FileObjectType? = nil) async -> any Error {
        guard let ftp = error as? FileProviderFTPError, [450, 550, 553].contains(ftp.replyCode) else { return error }
        let item: FileObject?
        do {
            item = try await itemIfPresent(path: path)
        } catch {
            return ftp
        }
        guard let item else {
            return FileProviderFTPError(replyCode: ftp.replyCode, command: ftp.command, path: path, serverText: ftp.serverText, kind: .notFound)
        }
        if let expecting, item.type != expecting {
            if expecting == .directory { return CocoaError.posix(ENOTDIR, path: path, remote: name) }
            if item.isDirectory { return CocoaError.posix(EISDIR, path: path, remote: name) }
        }
        return FileProviderFTPError(replyCode: ftp.replyCode, command: ftp.command, path: path, serverText: ftp.serverText,
                                    kind: ftp.replyCode == 450 ? .serverBusy : .permissionDenied)
    }
}

extension String {
    /// `"/a"` + `"b"` gives `"/a/b"`; the root gives `"/b"`.
    func appendingRemoteComponent(_ component: String) -> String {
        self == "/" ? "/" + component : self + "/" + component
    }
}
