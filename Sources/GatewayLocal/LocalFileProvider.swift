#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLocalShims
public import Foundation
public import GatewayCore
public import Logging

/// A remote backed by a folder on this machine, through POSIX calls.
///
/// No path can leave the root: `..` above it, and symbolic links that resolve outside it, are
/// refused with ``FileProviderError/pathEscapesRoot(path:)``. Writes are atomic by default (a
/// temporary file beside the target, renamed into place when complete).
///
/// The provider is organised like every backend: this file (configuration and attributes),
/// `+Listing` (listing), `+Reading` (reads and content hashes), `+Writing` (writes), `+Operations` (folders, moves,
/// copies, removal), `+Descriptor` (config keys and registration).
// Not final: `LocalFileProviderWithLinks` (in `+Sharing`) adds public links when the configuration has a
// `links` object, so that `as? FileProviderSharing` succeeds only then. Its state is immutable or
// behind locks, hence `@unchecked Sendable` (a non-final class cannot be checked).
public class LocalFileProvider: FileProviderBasic, FileProviderOperations, FileProviderReadWrite, FileProviderHashing, @unchecked Sendable {
    public static let type = "local"

    public let name: String
    public let baseURL: URL
    public let capabilities = ProviderCapabilities(
        features: [.serverSideCopy, .serverSideMove, .quota, .setModificationDate, .rangedRead, .conditionalWrite, .modificationTimes, .hardLinks],
        hashAlgorithms: Set(HashAlgorithm.allCases),
        modificationTimePrecision: .nanoseconds(1)
    )

    let resolver: LocalPathResolver
    /// The `trash` and `trash_dir` keys (``trash``).
    public let trashSettings: TrashSettings
    /// The desktop's home trash folder.
    public let homeTrash: String
    let logger: Logger
    /// The folder of the local state store (change-monitor snapshots); see ``StateLocation``.
    public let stateDirectory: URL
    /// Buffers for reads in the default chunk size, reused across reads.
    let readBuffers = ChunkBufferPool(size: ReadOptions().chunkSize)

    /// Creates a provider rooted at an existing folder.
    ///
    /// The root folder is opened once, here: every path is resolved from that descriptor (see
    /// `LocalPathResolver`), so the provider keeps using this folder even if its path is later renamed.
    ///
    /// - Parameters:
    ///   - name: the remote's name, used in messages.
    ///   - root: an absolute path of an existing folder.
    /// - Throws: a not-found or not-a-directory `CocoaError` when the root is unusable.
    ///   - stateDirectory: the folder of the local state store (change-monitor snapshots).
    ///   - trash: the `trash` and `trash_dir` keys.
    ///   - homeTrash: the desktop's home trash folder (by default `$XDG_DATA_HOME/Trash` or `~/.local/share/Trash`).
    public convenience init(name: String, root: String, stateDirectory: URL = StateLocation.directory(),
                            trash: TrashSettings = TrashSettings(), homeTrash: String? = nil,
                            logger: Logger = Logger(label: "gateway.local")) throws {
        try self.init(name: name, root: root, logger: logger, useOpenat2: true, stateDirectory: stateDirectory,
                      trash: trash, homeTrash: homeTrash)
    }

    /// Creates a provider; `useOpenat2: false` resolves every path component by component (the
    /// fallback for kernels without `openat2`), for tests.
    init(name: String, root: String, logger: Logger, useOpenat2: Bool, stateDirectory: URL = StateLocation.directory(),
         trash: TrashSettings = TrashSettings(), homeTrash: String? = nil) throws {
        guard let real = POSIX.realPath(root) else {
            throw CocoaError.described(.fileNoSuchFile, path: root, remote: name, reason: "root folder \(root) does not exist")
        }
        guard let info = POSIX.status(real, followSymlinks: true), POSIX.isDirectory(info) else {
            throw CocoaError.described(.fileReadUnknown, path: root, remote: name, reason: "root \(root) is not a folder")
        }
        do {
            self.resolver = try LocalPathResolver(root: real, useOpenat2: useOpenat2)
        } catch let failure as LocalPathResolver.SystemFailure {
            throw CocoaError.posix(failure.code, path: "/", remote: name)
        }
        self.name = name
        self.trashSettings = trash
        self.homeTrash = homeTrash ?? LocalTrashLocator.homeTrash(environment: ProcessInfo.processInfo.environment)
        self.stateDirectory = stateDirectory
        self.baseURL = URL(fileURLWithPath: real, isDirectory: true)
        self.logger = logger
    }

    /// The real (symlink-resolved) root folder.
    public var rootPath: String { resolver.root }

    // MARK: Errors

    /// The `CocoaError` for the current `errno`, naming the remote path.
    func posixError(_ code: Int32 = errno, _ path: String, writing: Bool = false) -> CocoaError {
        CocoaError.posix(code, path: path, remote: name, writing: writing)
    }

    /// The location of a normalized remote path below the root descriptor (see `LocalPathResolver`).
    ///
    /// - Throws: ``FileProviderError/pathEscapesRoot(path:)``, or the `CocoaError` of a failed system call.
    func locate(_ remote: String, followFinalSymlink: Bool, writing: Bool = false) throws -> LocalLocation {
        do {
            return try resolver.locate(remote, followFinalSymlink: followFinalSymlink)
        } catch let failure as LocalPathResolver.SystemFailure {
            throw posixError(failure.code, remote, writing: writing)
        }
    }

    // MARK: FileProviderBasic

    public func attributesOfItem(path: String) async throws -> FileObject {
        let remote = try RemotePath.normalize(path)
        let location = try locate(remote, followFinalSymlink: false)
        guard let info = location.status() else { throw posixError(errno, remote) }
        if POSIX.isSymlink(info) { return linkObject(path: remote, info: info, link: POSIX.readLink(at: location.fd, location.name)) }
        return POSIX.fileObject(path: remote, info: info)
    }

    /// A symbolic link, described by its target when that lies inside the root (else by itself).
    func linkObject(path: String, info: stat, link: String?) -> FileObject {
        guard let location = try? resolver.locate(path, followFinalSymlink: true),
              let target = location.status(), !POSIX.isSymlink(target) else {
            return POSIX.fileObject(path: path, info: info, symlinkTarget: link)
        }
        return POSIX.fileObject(path: path, info: info, symlinkTarget: link, target: target)
    }

    public func storageProperties(path: String) async throws -> VolumeObject {
        let remote = try RemotePath.normalize(path)
        let location = try locate(remote, followFinalSymlink: true)
        let fd = location.open(CLOCAL_O_PATH)
        guard fd >= 0 else { throw posixError(errno, remote) }
        defer { close(fd) }
        var info = statvfs()
        guard fstatvfs(fd, &info) == 0 else { throw posixError(errno, remote) }
        // Held at Int64.max: a FUSE file system may report any figures.
        func bytes(_ blocks: UInt) -> Int64 {
            let (product, overflow) = Int64(clamping: blocks).multipliedReportingOverflow(by: Int64(clamping: info.f_frsize))
            return overflow ? .max : product
        }
        return VolumeObject(
            totalCapacity: bytes(info.f_blocks),
            availableCapacity: bytes(info.f_bavail),
            usedCapacity: bytes(info.f_blocks >= info.f_bfree ? info.f_blocks - info.f_bfree : 0),
            name: name
        )
    }

    public func url(of path: String) throws -> URL {
        let remote = try RemotePath.normalize(path)
        return URL(fileURLWithPath: resolver.lexicalHostPath(remote))
    }

    public func relativePathOf(url: URL) throws -> String {
        guard url.isFileURL else {
            throw FileProviderError.invalidPath(path: url.absoluteString, reason: "not a file URL")
        }
        guard let remote = resolver.remotePath(ofHostPath: url.path) else {
            throw FileProviderError.pathEscapesRoot(path: url.path)
        }
        return remote
    }

    public func isReachable() async -> Bool {
        guard let info = POSIX.status(resolver.root, followSymlinks: true) else { return false }
        return POSIX.isDirectory(info) && access(resolver.root, R_OK | X_OK) == 0
    }
}
