public import Foundation
public import GatewayCore
import GatewaySFTPProtocol
public import Logging
import Synchronization

/// A remote on an SFTP server (SSH File Transfer Protocol version 3, as OpenSSH speaks it).
///
/// Organised like every backend: this file (configuration, paths, sessions, errors), `+Listing`
/// (`OPENDIR`/`READDIR` in pages, `LSTAT`), `+Reading` (pipelined `READ`s), `+Writing` (pipelined
/// `WRITE`s to a temporary name, then `posix-rename@openssh.com`), `+Operations` (`MKDIR`,
/// `RENAME`, `REMOVE`, `RMDIR`, `SETSTAT`, `copy-data`), `+Descriptor` (config keys). The
/// client is in `Client/`, the SSH channels in `Transport/`, key files and known_hosts in
/// `Authentication/`.
// Not final: `SFTPProviderWithLinks` (in `+Sharing`) adds public links when the configuration has a
// `links` object, so that `as? FileProviderSharing` succeeds only then. Its state is immutable or
// behind locks, hence `@unchecked Sendable` (a non-final class cannot be checked).
public class SFTPProvider: FileProviderBasic, FileProviderReadWrite, FileProviderOperations, AtomicWriteBackend, @unchecked Sendable {
    public static let type = "sftp"

    public let name: String
    public let baseURL: URL
    public let configuration: SFTPClientConfiguration
    /// The `trash` and `trash_dir` keys: whether and where removals and overwrites are kept.
    public let trashSettings: TrashSettings
    /// The folder of the local state store (change-monitor snapshots); see ``StateLocation``.
    public let stateDirectory: URL
    /// Identifies this remote's state: host, port, user and root, never a secret.
    public let monitorIdentity: String
    let pool: SFTPSessionPool
    let logger: Logger
    /// The remote's root on the server, worked out on first use (`REALPATH`).
    private let resolvedRoot = Mutex<String?>(nil)
    /// What the first session learned of the server: its extensions, announced or probed.
    private let knownExtensions = Mutex<Set<String>?>(nil)
    /// The hash commands the first session found working (see `+Hashing`).
    private let knownHashes = Mutex<Set<HashAlgorithm>>([])
    /// Whether the server writes into an existing file at an offset (found out by the first
    /// resumable or ranged upload that needs it; `nil` until then).
    private let offsetWrites = Mutex<Bool?>(nil)
    var writesAtOffsets: Bool? { offsetWrites.withLock { $0 } }
    func rememberWritesAtOffsets(_ value: Bool) { offsetWrites.withLock { $0 = value } }
    /// The algorithms ``hash(of:algorithm:)`` can compute on the server.
    var hashAlgorithms: Set<HashAlgorithm> { knownHashes.withLock { $0 } }
    /// Whether the server has `name`: announced, or found answering (see `probeExtensions`).
    func has(_ name: String) -> Bool { knownExtensions.withLock { $0?.contains(name) ?? false } }
    /// Whether the server computes hashes itself (`check-file`; see `+Hashing`).
    var usesCheckFile: Bool { Self.checkFileExtensions.contains(where: has) }

    /// Creates a provider. Nothing is sent until the first operation.
    public init(configuration: SFTPClientConfiguration, trash: TrashSettings = TrashSettings(),
                stateDirectory: URL = StateLocation.directory(), logger: Logger = Logger(label: "gateway.sftp")) {
        self.name = configuration.remoteName
        self.configuration = configuration
        self.trashSettings = trash
        self.stateDirectory = stateDirectory
        self.monitorIdentity = "sftp \(configuration.displayHost) user=\(configuration.user) root=\(configuration.root ?? "~")"
        var components = URLComponents()
        components.scheme = "sftp"
        components.host = configuration.host
        components.port = configuration.port == 22 ? nil : configuration.port
        components.user = configuration.user
        components.path = configuration.root.map { $0.hasPrefix("/") ? $0 : "/" + $0 } ?? "/"
        self.baseURL = components.url ?? URL(string: "sftp://localhost/")!
        self.pool = SFTPSessionPool(configuration: configuration, logger: logger)
        self.logger = logger
    }

    /// What SFTP offers: modification times to the second, ranged reads, writes that check the
    /// version they replace (looked up first, as FTP does), hashes where the server has
    /// `check-file` or the account can run `md5sum`/`sha1sum`/`sha256sum` (see `+Hashing`);
    /// server-side copies only where the
    /// server has `copy-data` or `copy-file`, quota where it has `statvfs@openssh.com`, hard links
    /// where it has `hardlink@openssh.com`. Those are declared
    /// once a first session has read the server's extensions.
    public var capabilities: ProviderCapabilities {
        var features: ProviderCapabilities.Features = [.serverSideMove, .rangedRead, .modificationTimes, .setModificationDate, .conditionalWrite]
        if let known = knownExtensions.withLock({ $0 }) {
            if known.contains("copy-data") || known.contains("copy-file") { features.insert(.serverSideCopy) }
            if known.contains("statvfs@openssh.com") { features.insert(.quota) }
            if known.contains("hardlink@openssh.com") { features.insert(.hardLinks) }
        }
        return ProviderCapabilities(features: features, hashAlgorithms: hashAlgorithms, modificationTimePrecision: .seconds(1))
    }

    public func url(of path: String) throws -> URL { try RemotePath.url(of: path, below: baseURL) }

    public func relativePathOf(url: URL) throws -> String { try RemotePath.path(of: url, below: baseURL) }

    /// Closes the remote's SSH sessions.
    public func shutdown() async { await pool.closeAll() }

    // MARK: Sessions

    /// Runs `body` on a session of the pool.
    func withSession<T: Sendable>(_ body: (SFTPConnection) async throws -> T) async throws -> T {
        let connection = try await pool.acquire()
        if knownExtensions.withLock({ $0 == nil }) {
            let names = await Self.probeExtensions(on: connection)
            let checkFile = !names.isDisjoint(with: Self.checkFileExtensions)
            let hashes = checkFile ? Set(HashAlgorithm.allCases) : await probeHashCommands(on: connection)
            knownHashes.withLock { $0 = hashes }
            knownExtensions.withLock { $0 = names }
        }
        do {
            let result = try await body(connection)
            await pool.release(connection)
            return result
        } catch {
            await pool.release(connection)
            throw error
        }
    }

    /// Extensions whose announcement is not the whole truth, tried once on the login folder:
    /// servers speaking later protocol versions answer `check-file-name` and `copy-file` without
    /// announcing them in version 3 (ProFTPD's mod_sftp announces only `versions`), and
    /// `rclone serve sftp` announces `hardlink@openssh.com` but refuses it. Each is sent
    /// harmlessly (a hash of the folder, a copy or a link of it onto itself); a server without the
    /// extension answers "unsupported" (`OP_UNSUPPORTED`, as the draft asks), one with it refuses
    /// the folder. Returns the extensions to count as present.
    static func probeExtensions(on connection: SFTPConnection) async -> Set<String> {
        var present = Set(connection.extensions.keys)
        present.remove("hardlink@openssh.com")
        var probes: [(name: String, request: SFTPRequest)] = []
        if !checkFileExtensions.contains(where: connection.supports) {
            probes.append(("check-file-name", .extended(name: "check-file-name", data: checkFileFields(".", algorithm: .md5))))
        }
        if !connection.supports("copy-file") {
            let fields = SFTPWriter.fields { writer in
                writer.write(string: ".")
                writer.write(string: ".")
                writer.write(UInt8(0))
            }
            probes.append(("copy-file", .extended(name: "copy-file", data: fields)))
        }
        if connection.supports("hardlink@openssh.com") {
            let fields = SFTPWriter.fields { writer in
                writer.write(string: ".")
                writer.write(string: ".")
            }
            probes.append(("hardlink@openssh.com", .extended(name: "hardlink@openssh.com", data: fields)))
        }
        var slots: [(name: String, reply: ReplySlot<SFTPResponse>)] = []
        for probe in probes {
            guard let slot = try? await connection.send(probe.request) else { break }
            slots.append((probe.name, slot))
        }
        for slot in slots {
            switch try? await slot.reply.value {
            case .extendedReply?: present.insert(slot.name)
            case .status(_, let code, _)? where [.failure, .noSuchFile, .permissionDenied].contains(code): present.insert(slot.name)
            default: break
            }
        }
        return present
    }

    // MARK: Paths

    /// The server path of a remote path.
    func serverPath(_ remote: String, on connection: SFTPConnection) async throws -> String {
        let root = try await rootPath(on: connection)
        if remote == "/" { return root }
        return root == "/" ? remote : root + remote
    }

    /// The remote's root on the server: `root` made absolute, or the login folder.
    func rootPath(on connection: SFTPConnection) async throws -> String {
        if let root = resolvedRoot.withLock({ $0 }) { return root }
        let configured = configuration.root ?? "."
        let root: String
        if configured.hasPrefix("/") {
            root = configured.count > 1 && configured.hasSuffix("/") ? String(configured.dropLast()) : configured
        } else {
            guard let names = try await connection.expectNames(.realpath(path: configured), "REALPATH", path: "/"),
                  let first = names.first, let text = first.text else {
                throw SFTPClientError.protocolViolation("REALPATH of \(configured) gave no name")
            }
            root = text
        }
        resolvedRoot.withLock { $0 = root }
        return root
    }

    // MARK: Errors

    /// An error for "already exists", as every provider reports it.
    func existsError(_ path: String) -> CocoaError {
        CocoaError.posix(EEXIST, path: path, remote: name, writing: true)
    }

    /// Makes SFTP v3's catch-all `FAILURE` precise by looking at the path, as the FTP backend
    /// does with 550: missing means not found, present means the item is in the way.
    func refine(_ error: any Error, path: String, expecting: FileObjectType? = nil) async -> any Error {
        guard let status = error as? SFTPStatusError, status.failureKind == .other else { return error }
        guard let item = try? await itemIfPresent(path: path) else {
            if (try? await itemIfPresent(path: RemotePath.parent(of: path))) == nil {
                return CocoaError.posix(ENOENT, path: RemotePath.parent(of: path), remote: name)
            }
            return error
        }
        if let expecting, item.type != expecting {
            if expecting == .directory { return CocoaError.posix(ENOTDIR, path: path, remote: name) }
            if item.isDirectory { return CocoaError.posix(EISDIR, path: path, remote: name) }
        }
        return error
    }
}
