#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
public final class LocalFileProvider: FileProviderBasic, FileProviderOperations, FileProviderReadWrite, FileProviderHashing {
    public static let type = "local"

    public let name: String
    public let baseURL: URL
    public let capabilities = ProviderCapabilities(
        features: [.serverSideCopy, .serverSideMove, .quota, .setModificationDate, .rangedRead, .resumeDownload,
                   .atomicWrite, .symbolicLinks, .conditionalWrite, .modificationTimes],
        hashAlgorithms: Set(HashAlgorithm.allCases),
        modificationTimePrecision: .nanoseconds(1)
    )

    let resolver: LocalPathResolver
    let logger: Logger
    /// Buffers for reads in the default chunk size, reused across reads.
    let readBuffers = ChunkBufferPool(size: ReadOptions().chunkSize)

    /// Creates a provider rooted at an existing folder.
    ///
    /// - Parameters:
    ///   - name: the remote's name, used in messages.
    ///   - root: an absolute path of an existing folder.
    /// - Throws: a not-found or not-a-directory `CocoaError` when the root is unusable.
    public init(name: String, root: String, logger: Logger = Logger(label: "gateway.local")) throws {
        guard let real = POSIX.realPath(root) else {
            throw CocoaError.described(.fileNoSuchFile, path: root, remote: name, reason: "root folder \(root) does not exist")
        }
        guard let info = POSIX.status(real, followSymlinks: true), POSIX.isDirectory(info) else {
            throw CocoaError.described(.fileReadUnknown, path: root, remote: name, reason: "root \(root) is not a folder")
        }
        self.name = name
        self.resolver = LocalPathResolver(root: real)
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

    // MARK: FileProviderBasic

    public func attributesOfItem(path: String) async throws -> FileObject {
        let remote = try RemotePath.normalize(path)
        let host = try resolver.hostPath(remote, followFinalSymlink: false)
        guard let info = POSIX.status(host, followSymlinks: false) else { throw posixError(errno, remote) }
        if POSIX.isSymlink(info) { return linkObject(path: remote, info: info, link: POSIX.readLink(at: AT_FDCWD, host)) }
        return POSIX.fileObject(path: remote, info: info)
    }

    /// A symbolic link, described by its target when that lies inside the root (else by itself).
    func linkObject(path: String, info: stat, link: String?) -> FileObject {
        guard let host = try? resolver.hostPath(path, followFinalSymlink: true),
              let target = POSIX.status(host, followSymlinks: true) else {
            return POSIX.fileObject(path: path, info: info, symlinkTarget: link)
        }
        return POSIX.fileObject(path: path, info: info, symlinkTarget: link, target: target)
    }

    public func storageProperties(path: String) async throws -> VolumeObject {
        let remote = try RemotePath.normalize(path)
        let host = try resolver.hostPath(remote, followFinalSymlink: true)
        var info = statvfs()
        guard statvfs(host, &info) == 0 else { throw posixError(errno, remote) }
        let unit = Int64(info.f_frsize)
        return VolumeObject(
            totalCapacity: Int64(info.f_blocks) * unit,
            availableCapacity: Int64(info.f_bavail) * unit,
            usedCapacity: Int64(info.f_blocks - info.f_bfree) * unit,
            name: remote
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
