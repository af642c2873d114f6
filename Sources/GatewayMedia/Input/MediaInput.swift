#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Foundation
import Synchronization

/// The bytes of one file as the media readers (libvips, libexif, TagLib, poppler) see them:
/// random access, read synchronously on a media thread (``MediaThread``), never on the Swift
/// concurrency pool.
///
/// Two kinds: ``DescriptorMediaInput`` over an open local file, and ``RemoteMediaInput``, which
/// fetches ranges from any provider's ranged reads into a sparse cache file as the readers ask for
/// them.
public protocol MediaInput: AnyObject, Sendable {
    /// The file's size in bytes.
    var size: Int64 { get }
    /// Reads up to `count` bytes at `offset` into `buffer` and returns how many it read (0 at the
    /// end). Blocks until the bytes are at hand.
    func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int
    /// An open descriptor of a local file holding every byte (a remote input fetches what it lacks
    /// first), for readers that only take a file (poppler). Owned by the input: do not close it.
    func completeDescriptor() throws -> Int32
    /// Whether ``completeDescriptor()`` costs nothing (the file is local).
    var isComplete: Bool { get }
    /// Bytes fetched from the provider so far (0 for a local file).
    var bytesFetched: Int64 { get }
}

/// A local file, read with `pread(2)` from a descriptor the input owns and closes.
public final class DescriptorMediaInput: MediaInput, @unchecked Sendable {
    /// The open descriptor (owned).
    public let descriptor: Int32
    public let size: Int64

    /// Takes ownership of `descriptor`, an open regular file of `size` bytes.
    public init(descriptor: Int32, size: Int64) {
        self.descriptor = descriptor
        self.size = size
    }

    deinit { close(descriptor) }

    public func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        guard offset >= 0, offset < size, count > 0 else { return 0 }
        while true {
            let got = pread(descriptor, buffer, count, off_t(offset))
            if got >= 0 { return got }
            if errno == EINTR { continue }
            throw CocoaError.posix(errno, path: "")
        }
    }

    public func completeDescriptor() throws -> Int32 { descriptor }
    public var isComplete: Bool { true }
    public var bytesFetched: Int64 { 0 }
}

/// Bytes already in memory (a small file, a test, a fuzzer's input).
public final class DataMediaInput: MediaInput, @unchecked Sendable {
    private let data: Data
    private let file = Mutex<Int32?>(nil)

    /// An input over `data`.
    public init(_ data: Data) { self.data = data }

    deinit { file.withLock { if let descriptor = $0 { close(descriptor) } } }

    public var size: Int64 { Int64(data.count) }

    public func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        guard offset >= 0, offset < size, count > 0 else { return 0 }
        let start = Int(offset)
        let length = min(count, data.count - start)
        data.withUnsafeBytes { bytes in buffer.copyMemory(from: bytes.baseAddress! + start, byteCount: length) }
        return length
    }

    /// An unlinked temporary file holding the bytes, written on first use.
    public func completeDescriptor() throws -> Int32 {
        try file.withLock { file in
            if let file { return file }
            let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            var template = Array("\(folder)/gateway-media-XXXXXX".utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard descriptor >= 0 else { throw CocoaError.posix(errno, path: folder, writing: true) }
            _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
            let written = data.withUnsafeBytes { bytes in bytes.isEmpty ? 0 : write(descriptor, bytes.baseAddress!, bytes.count) }
            guard written == data.count else {
                let code = errno
                close(descriptor)
                throw CocoaError.posix(code, path: folder, writing: true)
            }
            file = descriptor
            return descriptor
        }
    }

    public var isComplete: Bool { false }
    public var bytesFetched: Int64 { 0 }
}
