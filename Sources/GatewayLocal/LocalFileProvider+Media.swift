#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import GatewayCore
public import GatewayMedia

/// Thumbnails and metadata (the shared ``RangedMediaProvider``), read straight from the file.
extension LocalFileProvider: RangedMediaProvider {
    /// Opens the file itself (confined to the root like every read): the readers need no cache.
    public func openMediaInput(for item: FileObject, fetchBudget: Int64) async throws -> any MediaInput {
        let remote = try RemotePath.normalize(item.path)
        let fd = try locate(remote, followFinalSymlink: true).open(O_RDONLY)
        guard fd >= 0 else { throw posixError(errno, remote) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw posixError(code, remote)
        }
        guard !POSIX.isDirectory(info) else {
            close(fd)
            throw posixError(EISDIR, remote)
        }
        return DescriptorMediaInput(descriptor: fd, size: Int64(info.st_size))
    }
}
