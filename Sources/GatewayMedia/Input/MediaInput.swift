#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

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
