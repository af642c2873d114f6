#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import GatewayCore
import Synchronization

extension LocalFileProvider: FileProviderPositionalWrite {
    public func openPositionalWrite(path: String, size: Int64, options: WriteOptions) async throws -> any PositionalFileWriter {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw posixError(EISDIR, remote, writing: true) }
        guard size >= 0 else { throw FileProviderError.invalidPath(path: remote, reason: "negative size") }
        // As for writes: an undoable overwrite replaces a symbolic link itself.
        let location = try locate(remote, followFinalSymlink: options.beforeReplacing == nil, writing: true)
        let existing = location.status()
        if let existing {
            if POSIX.isDirectory(existing) { throw posixError(EISDIR, remote, writing: true) }
            if !options.overwrite { throw posixError(EEXIST, remote, writing: true) }
        }
        let temporary = location.sibling(RemotePath.temporaryName(for: location.name))
        let fd = temporary.open(O_WRONLY | O_CREAT | O_EXCL, mode: 0o666)
        guard fd >= 0 else { throw posixError(errno, remote, writing: true) }
        // The whole size up front: a full disk fails here, not half-way (where the file system can).
        let reserved = posix_fallocate(fd, 0, off_t(size))
        if reserved != 0, reserved != EOPNOTSUPP, reserved != EINVAL {
            close(fd)
            unlinkat(temporary.fd, temporary.name, 0)
            throw posixError(reserved, remote, writing: true)
        }
        if reserved != 0, ftruncate(fd, off_t(size)) != 0 {
            let failure = errno
            close(fd)
            unlinkat(temporary.fd, temporary.name, 0)
            throw posixError(failure, remote, writing: true)
        }
        if let existing, !POSIX.isSymlink(existing) { fchmod(fd, existing.st_mode & 0o7777) }
        return LocalPositionalWriter(provider: self, fd: fd, temporary: temporary, target: location, remote: remote,
                                     size: size, options: options)
    }
}

/// A local file assembled with `pwrite` under a temporary name, renamed into place when complete.
final class LocalPositionalWriter: PositionalFileWriter {
    private struct State {
        var fd: Int32?
        var written: Int64 = 0
        var finished = false
    }

    private let provider: LocalFileProvider
    /// The file being assembled, and the name it takes when complete (in the same folder).
    private let temporary: LocalLocation
    private let target: LocalLocation
    private let remote: String
    private let size: Int64
    private let overwrite: Bool
    private let beforeReplacing: (@Sendable (String) async throws -> Void)?
    private let modificationDate: Date?
    private let state: Mutex<State>

    init(provider: LocalFileProvider, fd: Int32, temporary: LocalLocation, target: LocalLocation, remote: String, size: Int64,
         options: WriteOptions) {
        self.provider = provider
        self.temporary = temporary
        self.target = target
        self.remote = remote
        self.size = size
        self.overwrite = options.overwrite
        self.beforeReplacing = options.beforeReplacing
        self.modificationDate = options.modificationDate
        self.state = Mutex(State(fd: fd))
    }

    func write(_ data: Data, at offset: Int64) throws {
        guard offset >= 0, offset.saturatingAdding(Int64(data.count)) <= size else {
            throw FileProviderError.invalidPath(path: remote, reason: "a piece at \(offset) of \(data.count) bytes lies outside \(size) bytes")
        }
        guard let fd = state.withLock({ $0.fd }) else { throw CancellationError() }
        let failure = data.withUnsafeBytes { FileDescriptorIO.writeAll(fd, $0, at: offset) }
        if failure != 0 { throw provider.posixError(failure, remote, writing: true) }
        state.withLock { $0.written += Int64(data.count) }
    }

    func commit() async throws -> FileObject {
        let (fd, written) = state.withLock { state -> (Int32?, Int64) in
            defer { state.fd = nil }
            return (state.fd, state.written)
        }
        guard let fd else { throw CancellationError() }
        var closed = false
        do {
            guard written == size else {
                throw FileProviderError.truncated(path: remote, reason: "received \(written) of \(size) bytes; nothing was written")
            }
            if let modificationDate, futimens(fd, POSIX.times(modification: modificationDate)) != 0 {
                throw provider.posixError(errno, remote, writing: true)
            }
            closed = true
            guard close(fd) == 0 else { throw provider.posixError(errno, remote, writing: true) }
            try await beforeReplacing?(remote)
            try provider.commit(temporary: temporary, to: target, overwrite: overwrite, remote: remote)
        } catch {
            if !closed { close(fd) }
            unlinkat(temporary.fd, temporary.name, 0)
            throw error
        }
        state.withLock { $0.finished = true }
        guard let info = target.status() else { throw provider.posixError(errno, remote) }
        return POSIX.fileObject(path: remote, info: info)
    }

    func abort() {
        let (fd, finished) = state.withLock { state -> (Int32?, Bool) in
            defer { state.fd = nil }
            return (state.fd, state.finished)
        }
        if let fd { close(fd) }
        if !finished { unlinkat(temporary.fd, temporary.name, 0) }
    }

    deinit { abort() }
}
