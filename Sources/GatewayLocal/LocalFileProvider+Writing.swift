#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import GatewayCore

extension LocalFileProvider: FileProviderResumableWrite {
    public func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        try await writeFile(path: path, options: options, announcedSize: stream.expectedLength) { fd, remote in
            try await self.copy(stream, into: fd, remote: remote, options: options)
        }
    }

    public func resumableWriteLength(path: String, key: String) async throws -> Int64 {
        let remote = try RemotePath.normalize(path)
        let host = try resolver.hostPath(remote, followFinalSymlink: true)
        guard let info = POSIX.status(Self.resumablePath(host, key: key), followSymlinks: false), POSIX.isRegularFile(info) else { return 0 }
        return Int64(info.st_size)
    }

    public func resumableWrite(path: String, key: String, offset: Int64, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        var options = options
        options.atomically = true
        let announced = stream.expectedLength.map { $0 + offset }
        return try await writeFile(path: path, options: options, announcedSize: announced, resume: (key, offset)) { fd, remote in
            try await self.copy(stream, into: fd, remote: remote, options: options)
        }
    }

    /// The partial file of a resumable write of `host` under `key`, beside it.
    static func resumablePath(_ host: String, key: String) -> String {
        folder(of: host) + "/" + RemotePath.resumableName(for: RemotePath.lastComponent(of: host), key: key)
    }

    /// The folder holding `host` (a host path), without a trailing `/` (empty for a file in `/`).
    static func folder(of host: String) -> String {
        String(host[..<(host.lastIndex(of: "/") ?? host.startIndex)])
    }

    /// Writes every chunk of `stream` to `fd`; returns the byte count.
    private func copy(_ stream: ByteStream, into fd: Int32, remote: String, options: WriteOptions) async throws -> Int64 {
        var written: Int64 = 0
        for try await chunk in stream {
            try options.progress.checkCancellation()
            let failure = FileDescriptorIO.writeAll(fd, chunk)
            if failure != 0 { throw posixError(failure, remote, writing: true) }
            written += Int64(chunk.count)
            options.progress?.addBytes(Int64(chunk.count))
        }
        return written
    }

    /// The shared part of every write: checks, a temporary file beside the target (or the target
    /// itself when not atomic), the size check, the modification time, and the final rename.
    /// `fill` writes the contents into the open descriptor and returns how many bytes it wrote.
    /// On any failure or cancellation the partial file is removed, except that a resumable write
    /// (`resume`: its key and the offset it continues at) keeps it after a transient failure.
    func writeFile(path: String, options: WriteOptions, announcedSize: Int64?, resume: (key: String, offset: Int64)? = nil,
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
        let folder = Self.folder(of: host)
        let target: String
        let fd: Int32
        if let resume {
            target = Self.resumablePath(host, key: resume.key)
            fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o666)
        } else if options.atomically {
            target = folder + "/" + RemotePath.temporaryName(for: RemotePath.lastComponent(of: host))
            fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        } else {
            target = host
            fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (options.overwrite ? 0 : O_EXCL), 0o666)
        }
        guard fd >= 0 else { throw posixError(errno, remote, writing: true) }
        var open = true
        var committed = false
        var keepPartial = false
        defer {
            if open { close(fd) }
            if !committed, !keepPartial { unlink(target) }
        }
        if let resume {
            // One writer per partial file: another process resuming the same file waits for nothing and fails.
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                throw CocoaError.described(.fileWriteUnknown, path: remote, remote: name,
                                           reason: "another write of this file is in progress")
            }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw posixError(errno, remote, writing: true) }
            guard resume.offset >= 0, Int64(info.st_size) >= resume.offset else {
                throw FileProviderError.truncated(path: remote, reason: "the interrupted write holds \(info.st_size) bytes, not \(resume.offset)")
            }
            // Only truncate when there is more than the offset: ext4 flushes a file truncated to
            // zero when it is closed (auto_da_alloc), which would cost every new file a wait.
            guard Int64(info.st_size) == resume.offset || ftruncate(fd, off_t(resume.offset)) == 0,
                  lseek(fd, off_t(resume.offset), SEEK_SET) == off_t(resume.offset) else {
                throw posixError(errno, remote, writing: true)
            }
        }
        if options.atomically, let existing { fchmod(fd, existing.st_mode & 0o7777) }

        let written: Int64
        do {
            written = try await fill(fd, remote) + (resume?.offset ?? 0)
        } catch {
            // A dropped connection or a time-out: what arrived stays for the next attempt.
            keepPartial = resume != nil && error.failureKind.keepsInterruptedWrite
            throw error
        }
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
        if resume != nil { removeStalePartials(of: host) }
        logger.debug("wrote file", metadata: ["path": .string(remote), "bytes": .stringConvertible(written),
                                              "atomic": .stringConvertible(options.atomically)])
        guard let info = POSIX.status(host, followSymlinks: true) else { throw posixError(errno, remote) }
        return POSIX.fileObject(path: remote, info: info)
    }

    /// Renames a finished temporary file into place. Without `overwrite`, `link` + `unlink` makes
    /// "fail if it exists" atomic.
    func commit(temporary: String, to host: String, overwrite: Bool, remote: String) throws {
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

    /// Removes resumable partial files of `host` left by interrupted writes of an older version
    /// of the source (their key no longer matches anything). Runs after a resumable write completed.
    private func removeStalePartials(of host: String) {
        let folder = Self.folder(of: host)
        guard let prefix = RemotePath.resumablePrefix(for: RemotePath.lastComponent(of: host)),
              let names = try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "/" : folder) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".partial") {
            unlink(folder + "/" + name)
        }
    }
}
