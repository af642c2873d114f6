#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import GatewayCore

extension LocalFileProvider {
    public func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        try await writeFile(path: path, options: options, announcedSize: stream.expectedLength) { fd, remote in
            var written: Int64 = 0
            for try await chunk in stream {
                try options.progress.checkCancellation()
                let failure = FileDescriptorIO.writeAll(fd, chunk)
                if failure != 0 { throw self.posixError(failure, remote, writing: true) }
                written += Int64(chunk.count)
                options.progress?.addBytes(Int64(chunk.count))
            }
            return written
        }
    }

    /// The shared part of every write: checks, a temporary file beside the target (or the target
    /// itself when not atomic), the size check, the modification time, and the final rename.
    /// `fill` writes the contents into the open descriptor and returns how many bytes it wrote.
    /// On any failure or cancellation the partial file is removed.
    func writeFile(path: String, options: WriteOptions, announcedSize: Int64?,
                   fill: (Int32, String) async throws -> Int64) async throws -> FileObject {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw posixError(EISDIR, remote, writing: true) }
        let host = try resolver.hostPath(remote, followFinalSymlink: true)
        let existing = POSIX.status(host, followSymlinks: true)
        if let existing {
            if POSIX.isDirectory(existing) { throw posixError(EISDIR, remote, writing: true) }
            if !options.overwrite { throw posixError(EEXIST, remote, writing: true) }
        }
        if let expected = options.ifVersion {
            let actual = existing.map(POSIX.versionTag)
            guard actual == expected else {
                throw FileProviderError.versionMismatch(path: remote, expected: expected, actual: actual)
            }
        }
        let folder = String(host[..<(host.lastIndex(of: "/") ?? host.startIndex)])
        let target: String
        let fd: Int32
        if options.atomically {
            target = folder + "/" + RemotePath.temporaryName(for: RemotePath.lastComponent(of: host))
            fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        } else {
            target = host
            fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (options.overwrite ? 0 : O_EXCL), 0o666)
        }
        guard fd >= 0 else { throw posixError(errno, remote, writing: true) }
        var open = true
        var committed = false
        defer {
            if open { close(fd) }
            if !committed { unlink(target) }
        }
        if options.atomically, let existing { fchmod(fd, existing.st_mode & 0o7777) }

        let written = try await fill(fd, remote)
        try options.progress.checkCancellation()
        if let expected = options.expectedSize ?? announcedSize, expected != written {
            throw FileProviderError.truncated(path: remote, reason: "received \(written) of \(expected) bytes; nothing was written")
        }
        if let date = options.modificationDate {
            let times = POSIX.times(modification: date)
            if futimens(fd, times) != 0 { throw posixError(errno, remote, writing: true) }
        }
        open = false
        if close(fd) != 0 { throw posixError(errno, remote, writing: true) }
        if options.atomically {
            try commit(temporary: target, to: host, overwrite: options.overwrite, remote: remote)
        }
        committed = true
        logger.debug("wrote file", metadata: ["path": .string(remote), "bytes": .stringConvertible(written),
                                              "atomic": .stringConvertible(options.atomically)])
        guard let info = POSIX.status(host, followSymlinks: true) else { throw posixError(errno, remote) }
        return POSIX.fileObject(path: remote, info: info)
    }

    /// Renames a finished temporary file into place. Without `overwrite`, `link` + `unlink` makes
    /// "fail if it exists" atomic.
    private func commit(temporary: String, to host: String, overwrite: Bool, remote: String) throws {
        if overwrite {
            guard rename(temporary, host) == 0 else { throw posixError(errno, remote, writing: true) }
            return
        }
        if link(temporary, host) == 0 {
            unlink(temporary)
            return
        }
        let linkError = errno
        guard linkError == EPERM || linkError == ENOTSUP || linkError == EXDEV else {
            throw posixError(linkError, remote, writing: true)
        }
        // File systems without hard links: check, then rename (a small race remains there).
        if POSIX.status(host, followSymlinks: false) != nil { throw posixError(EEXIST, remote, writing: true) }
        guard rename(temporary, host) == 0 else { throw posixError(errno, remote, writing: true) }
    }
}
