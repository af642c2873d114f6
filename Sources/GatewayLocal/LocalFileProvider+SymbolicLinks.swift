import Foundation
public import GatewayCore
#if canImport(Glibc)
import Glibc
#endif

extension LocalFileProvider: FileProviderSymbolicLinks {
    public func createSymbolicLink(at path: String, target: String) async throws -> FileObject {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw posixError(EEXIST, remote, writing: true) }
        guard !target.isEmpty, !target.utf8.contains(0), target.utf8.count < Int(PATH_MAX) else {
            throw FileProviderError.invalidPath(path: remote, reason: "a link's target must be a text of 1 to \(PATH_MAX - 1) bytes without NUL")
        }
        let location = try locate(remote, followFinalSymlink: false, writing: true)
        guard symlinkat(target, location.fd, location.name) == 0 else { throw posixError(errno, remote, writing: true) }
        return try await attributesOfItem(path: remote)
    }

    public func destinationOfSymbolicLink(at path: String) async throws -> String {
        let remote = try RemotePath.normalize(path)
        let location = try locate(remote, followFinalSymlink: false)
        guard let info = location.status() else { throw posixError(errno, remote) }
        guard POSIX.isSymlink(info) else { throw FileProviderError.invalidPath(path: remote, reason: "\(remote) is not a symbolic link") }
        guard let link = POSIX.readLink(at: location.fd, location.name) else { throw posixError(errno, remote) }
        return link
    }
}
