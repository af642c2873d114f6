#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import GatewayCore

/// Ranges of one file written by several processes (a plan's workers, on one machine or on several
/// that mount the same file system): each `pwrite`s its bytes into the shared partial file beside
/// the target and `fsync`s them; the commit renames the complete file into place. A symbolic link
/// under the target's name is replaced, never written through (the partial file lies beside the
/// name, whatever it points to).
extension LocalFileProvider: FileProviderRangedWrite {
    public func writeRange(path: String, key: String, size: Int64, offset: Int64, length: Int64, from stream: ByteStream,
                           progress: TransferProgress?) async throws {
        let remote = try rangedWriteTarget(path, size: size, offset: offset, length: length)
        let partial = Self.partial(of: try locate(remote, followFinalSymlink: false, writing: true), key: key)
        let fd = partial.open(O_WRONLY | O_CREAT, mode: 0o666)
        guard fd >= 0 else { throw posixError(errno, remote, writing: true) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw posixError(errno, remote, writing: true) }
        guard POSIX.isRegularFile(info) else { throw posixError(EINVAL, remote, writing: true) }
        if Int64(info.st_size) > size {
            throw FileProviderError.invalidPath(path: remote, reason: "its partial file holds \(info.st_size) bytes, more than the \(size) planned")
        }
        // Every writer makes it the full size (the same size: the order does not matter); the
        // ranges not yet written read as zeros until their writers come.
        if Int64(info.st_size) < size, ftruncate(fd, off_t(size)) != 0 { throw posixError(errno, remote, writing: true) }
        // Exactly `length` bytes: fewer or more fail (more before a byte lands past the range).
        var position = offset
        for try await chunk in stream.exactly(length, path: remote, what: "the range at \(offset)") {
            try progress.checkCancellation()
            let failure = chunk.withUnsafeBytes { FileDescriptorIO.writeAll(fd, $0, at: position) }
            if failure != 0 { throw posixError(failure, remote, writing: true) }
            position += Int64(chunk.count)
            progress?.addBytes(Int64(chunk.count))
        }
        // On stable storage before the worker says the range is done.
        guard fsync(fd) == 0 else { throw posixError(errno, remote, writing: true) }
    }

    public func rangedWriteSize(path: String, key: String) async throws -> Int64? {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { return nil }
        guard let info = Self.partial(of: try locate(remote, followFinalSymlink: false), key: key).status(), POSIX.isRegularFile(info) else {
            return nil
        }
        return Int64(info.st_size)
    }

    public func commitRanges(path: String, key: String, size: Int64, options: WriteOptions) async throws -> FileObject {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw posixError(EISDIR, remote, writing: true) }
        let location = try locate(remote, followFinalSymlink: false, writing: true)
        if let existing = location.status() {
            if POSIX.isDirectory(existing) { throw posixError(EISDIR, remote, writing: true) }
            if !options.overwrite { throw posixError(EEXIST, remote, writing: true) }
        }
        let partial = Self.partial(of: location, key: key)
        let fd = partial.open(O_WRONLY)
        guard fd >= 0 else {
            if errno == ENOENT { throw FileProviderError.truncated(path: remote, reason: "the partial file its ranges were written to is gone") }
            throw posixError(errno, remote, writing: true)
        }
        var open = true
        defer { if open { close(fd) } }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw posixError(errno, remote, writing: true) }
        guard Int64(info.st_size) == size else {
            throw FileProviderError.truncated(path: remote, reason: "its partial file holds \(info.st_size) bytes, not \(size)")
        }
        if let date = options.modificationDate, futimens(fd, POSIX.times(modification: date)) != 0 {
            throw posixError(errno, remote, writing: true)
        }
        open = false
        guard close(fd) == 0 else { throw posixError(errno, remote, writing: true) }
        try await options.beforeReplacing?(remote)
        try commit(temporary: partial, to: location, overwrite: options.overwrite, remote: remote)
        guard let stored = location.status() else { throw posixError(errno, remote) }
        return POSIX.fileObject(path: remote, info: stored)
    }

    public func discardRanges(path: String, key: String) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { return }
        let partial = Self.partial(of: try locate(remote, followFinalSymlink: false), key: key)
        if unlinkat(partial.fd, partial.name, 0) != 0, errno != ENOENT { throw posixError(errno, remote, writing: true) }
    }
}
