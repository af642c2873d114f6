import Foundation
public import GatewayCore
#if canImport(Glibc)
import Glibc
#endif

extension LocalFileProvider: FileProviderHardLinks {
    /// `linkat(2)` without following links: a symbolic link at `existing` gets a second name itself.
    public func createHardLink(at path: String, to existing: String) async throws -> FileObject {
        let remote = try RemotePath.normalize(path), source = try RemotePath.normalize(existing)
        guard remote != "/" else { throw posixError(EEXIST, remote, writing: true) }
        let from = try locate(source, followFinalSymlink: false)
        guard let info = from.status() else { throw posixError(errno, source) }
        guard !POSIX.isDirectory(info) else {
            throw FileProviderError.invalidPath(path: source, reason: "\(source) is a folder; only files have hard links")
        }
        let to = try locate(remote, followFinalSymlink: false, writing: true)
        guard linkat(from.fd, from.name, to.fd, to.name, 0) == 0 else { throw posixError(errno, remote, writing: true) }
        return try await attributesOfItem(path: remote)
    }
}
