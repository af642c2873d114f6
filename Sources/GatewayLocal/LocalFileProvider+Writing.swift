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
        let location = try locate(remote, followFinalSymlink: true)
        guard let info = Self.partial(of: location, key: key).status(), POSIX.isRegularFile(info) else { return 0 }
        return Int64(info.st_size)
    }

    public func resumableWrite(path: String, key: String, offset: Int64, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        var options = options
        options.atomically = true
        let announced = stream.expectedLength.map { $0.saturatingAdding(offset) }
        return try await writeFile(path: path, options: options, announcedSize: announced, resume: (key, offset)) { fd, remote in
            try await self.copy(stream, into: fd, remote: remote, options: options)
        }
    }

    /// The partial file of a resumable write of `location` under `key`, beside it.
    static func partial(of location: LocalLocation, key: String) -> LocalLocation {
        location.sibling(RemotePath.resumableName(for: location.name, key: key))
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
        var options = options
        if options.beforeReplacing != nil { options.atomically = true }
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw posixError(EISDIR, remote, writing: true) }
        // An undoable overwrite replaces a symbolic link itself (the link goes to the trash, its
        // target is left alone), so what the trash keeps is what the name held.
        let location: LocalLocation
        do {
            location = try locate(remote, followFinalSymlink: options.beforeReplacing == nil, writing: true)
        } catch let error as CocoaError where error.failureKind == .notFound {
            // The folder to write into is missing: name it, as every backend does. (Not for a
            // dangling link in the way, whose folder is there.)
            let parent = RemotePath.parent(of: remote)
            if (try? locate(parent, followFinalSymlink: true).status()) == nil { throw posixError(ENOENT, parent, writing: true) }
            throw error
        }
        let existing = location.status()
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
        // Every file below is opened and renamed relative to the folder's descriptor, with O_NOFOLLOW.
        let target: LocalLocation
        let fd: Int32
        if let resume {
            target = Self.partial(of: location, key: resume.key)
            fd = target.open(O_WRONLY | O_CREAT, mode: 0o666)
        } else if options.atomically {
            target = location.sibling(RemotePath.temporaryName(for: location.name))
            fd = target.open(O_WRONLY | O_CREAT | O_EXCL, mode: 0o666)
        } else {
            target = location
            fd = target.open(O_WRONLY | O_CREAT | O_TRUNC | (options.overwrite ? 0 : O_EXCL), mode: 0o666)
        }
        guard fd >= 0 else { throw posixError(errno, remote, writing: true) }
        var open = true
        var committed = false
        var keepPartial = false
        defer {
            if open { close(fd) }
            if !committed, !keepPartial { unlinkat(target.fd, target.name, 0) }
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
        if options.atomically, let existing, !POSIX.isSymlink(existing) { fchmod(fd, existing.st_mode & 0o7777) }

        let written: Int64
        do {
            written = try await fill(fd, remote) + (resume?.offset ?? 0)
        } catch {
            // A dropped connection or a time-out: what arrived stays for the next attempt.
            keepPartial = resume != nil && error.failureKind.keepsInterruptedWrite
            throw error
        }
        try options.progress.checkCancellation()
        try AtomicWrite.checkLength(written, expected: options.expectedSize ?? announcedSize, path: remote)
        if let date = options.modificationDate {
            let times = POSIX.times(modification: date)
            if futimens(fd, times) != 0 { throw posixError(errno, remote, writing: true) }
        }
        open = false
        if close(fd) != 0 { throw posixError(errno, remote, writing: true) }
        if options.atomically {
            try await options.beforeReplacing?(remote)
            try commit(temporary: target, to: location, overwrite: options.overwrite, remote: remote)
        }
        committed = true
        if resume != nil { removeStalePartials(of: location) }
        logger.debug("wrote file", metadata: ["path": .string(remote), "bytes": .stringConvertible(written),
                                              "atomic": .stringConvertible(options.atomically)])
        guard let info = location.status() else { throw posixError(errno, remote) }
        return POSIX.fileObject(path: remote, info: info)
    }

    /// Renames a finished temporary file into place (both in the same folder, by descriptor).
    /// Without `overwrite`, `linkat` + `unlinkat` makes "fail if it exists" atomic.
    func commit(temporary: LocalLocation, to target: LocalLocation, overwrite: Bool, remote: String) throws {
        if overwrite {
            guard renameat(temporary.fd, temporary.name, target.fd, target.name) == 0 else { throw posixError(errno, remote, writing: true) }
            return
        }
        if linkat(temporary.fd, temporary.name, target.fd, target.name, 0) == 0 {
            unlinkat(temporary.fd, temporary.name, 0)
            return
        }
        let linkError = errno
        guard linkError == EPERM || linkError == ENOTSUP || linkError == EXDEV else {
            throw posixError(linkError, remote, writing: true)
        }
        // File systems without hard links: check, then rename (a small race remains there).
        if target.status() != nil { throw posixError(EEXIST, remote, writing: true) }
        guard renameat(temporary.fd, temporary.name, target.fd, target.name) == 0 else { throw posixError(errno, remote, writing: true) }
    }

    /// Removes resumable partial files of `location` left by interrupted writes of an older version
    /// of the source (their key no longer matches anything). Runs after a resumable write completed.
    private func removeStalePartials(of location: LocalLocation) {
        guard let prefix = RemotePath.resumablePrefix(for: location.name),
              let cursor = try? DirectoryCursor(location.sibling("."), remote: "/", provider: self) else { return }
        while let name = try? cursor.nextName(folder: "/", provider: self) {
            if name.hasPrefix(prefix) && name.hasSuffix(".partial") {
                unlinkat(cursor.fd, name, 0)
            }
        }
    }
}
