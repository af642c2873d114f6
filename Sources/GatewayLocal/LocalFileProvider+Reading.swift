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
        let host = try resolver.hostPath(remote, followFinalSymlink: true)
        let fd = open(host, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw posixError(errno, remote) }
        let reader = FileRangeReader(fd: fd)
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
        let end = options.length.map { min(size, start + $0) } ?? size
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

    init(fd: Int32) { state = Mutex(State(fd: fd)) }

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
            var data = Data(count: wanted)
            let fd = state.fd, position = state.position
            let count = data.withUnsafeMutableBytes { buffer -> Int in
                var result: Int
                repeat {
                    result = pread(fd, buffer.baseAddress, wanted, off_t(position))
                } while result < 0 && errno == EINTR
                return result
            }
            if count < 0 { throw CocoaError.posix(errno, path: state.path, remote: state.remote) }
            if count == 0 {
                throw FileProviderError.truncated(path: state.path, reason: "the file shrank while it was being read")
            }
            data.count = count
            state.position += Int64(count)
            return data
        }
    }

    deinit {
        state.withLock { state in
            if state.fd >= 0 { Glibc.close(state.fd) }
        }
    }
}
