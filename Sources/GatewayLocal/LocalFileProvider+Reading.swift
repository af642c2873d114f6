#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import GatewayCore
import Synchronization

extension LocalFileProvider {
    public func readStream(path: String, options: ReadOptions) async throws -> ByteStream {
        let remote = try RemotePath.normalize(path)
        let fd = try locate(remote, followFinalSymlink: true).open(O_RDONLY)
        guard fd >= 0 else { throw posixError(errno, remote) }
        let reader = FileRangeReader(fd: fd, buffers: readBuffers)
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw posixError(errno, remote) }
        guard !POSIX.isDirectory(info) else { throw posixError(EISDIR, remote) }
        if let expected = options.ifVersion, expected != POSIX.versionTag(info) {
            throw FileProviderError.versionMismatch(path: remote, expected: expected, actual: POSIX.versionTag(info))
        }
        guard options.offset >= 0, (options.length ?? 0) >= 0 else {
            throw FileProviderError.invalidPath(path: remote, reason: "negative offset or length")
        }
        // Read up to the size the file had when opened: a consistent snapshot even if it grows.
        let size = Int64(info.st_size)
        let start = min(options.offset, size)
        // (Saturating: an offset and a length from a user may add past Int64.max.)
        let end = options.length.map { min(size, start.saturatingAdding($0)) } ?? size
        reader.configure(start: start, end: end, chunkSize: max(4096, options.chunkSize), path: remote, remote: name)
        return ByteStream(expectedLength: end - start) { try reader.next() }
    }

    /// Computes the digest by reading the file once, in chunks (local reads are cheap; nothing is
    /// cached, so the answer is always that of the current contents).
    public func hash(of path: String, algorithm: HashAlgorithm) async throws -> String? {
        try await ContentHasher.hash(readStream(path: path, options: ReadOptions()), algorithm)
    }
}

/// Reads a byte range of an open file with `pread`, one chunk per call; closes the file when done
/// or dropped.
final class FileRangeReader: Sendable {
    private struct State {
        var fd: Int32
        var position: Int64 = 0
        var end: Int64 = 0
        var chunkSize = 1 << 20
        var path = ""
        var remote = ""
    }

    private let state: Mutex<State>
    /// Where chunks of the pool's size come from (and go back to).
    private let buffers: ChunkBufferPool

    init(fd: Int32, buffers: ChunkBufferPool) {
        state = Mutex(State(fd: fd))
        self.buffers = buffers
    }

    func configure(start: Int64, end: Int64, chunkSize: Int, path: String, remote: String) {
        state.withLock { state in
            state.position = start
            state.end = end
            state.chunkSize = chunkSize
            state.path = path
            state.remote = remote
        }
    }

    func next() throws -> Data? {
        try state.withLock { state -> Data? in
            guard state.fd >= 0 else { return nil }
            let wanted = Int(min(Int64(state.chunkSize), state.end - state.position))
            if wanted <= 0 {
                Glibc.close(state.fd)
                state.fd = -1
                return nil
            }
            // Uninitialised memory, reused through the pool when the chunk fits its buffers
            // (Data(count:) would zero every chunk first, a memset of every byte read).
            let pooled = wanted <= buffers.size
            guard let memory = pooled ? buffers.take() : malloc(wanted) else {
                throw CocoaError.posix(ENOMEM, path: state.path, remote: state.remote)
            }
            var count: Int
            repeat {
                count = pread(state.fd, memory, wanted, off_t(state.position))
            } while count < 0 && errno == EINTR
            if count <= 0 {
                let code = errno
                if pooled { buffers.give(memory) } else { free(memory) }
                if count < 0 { throw CocoaError.posix(code, path: state.path, remote: state.remote) }
                throw FileProviderError.truncated(path: state.path, reason: "the file shrank while it was being read")
            }
            state.position += Int64(count)
            return pooled ? buffers.data(memory, count: count) : Data(bytesNoCopy: memory, count: count, deallocator: .free)
        }
    }

    deinit {
        state.withLock { state in
            if state.fd >= 0 { Glibc.close(state.fd) }
        }
    }
}
