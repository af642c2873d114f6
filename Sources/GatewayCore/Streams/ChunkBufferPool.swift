#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
package import Foundation
import Synchronization

/// Read buffers of one size, handed out uninitialised and taken back when the `Data` that wraps
/// them is released, so a long read does not allocate a fresh chunk each time. (Fresh chunks of a
/// MiB are mapped from the kernel and unmapped on free: a page fault and a zeroed page per 4 KiB
/// read, about 90,000 faults for a 1 GiB upload; and `Data(count:)` zeroes them once more.)
///
/// Keeps at most `limit` idle buffers. Local keeps one per provider for its reads; the HTTP and FTP
/// clients one each for the bodies they receive.
package final class ChunkBufferPool: Sendable {
    /// The size of every buffer.
    package let size: Int
    private let limit: Int
    /// Idle buffers, as addresses (raw pointers are not `Sendable`).
    private let idle = Mutex<[UInt]>([])

    /// A pool of `size`-byte buffers that keeps up to `limit` idle ones.
    package init(size: Int, limit: Int = 8) {
        self.size = size
        self.limit = limit
    }

    /// A buffer of `size` bytes with undefined contents, or `nil` when memory is exhausted.
    package func take() -> UnsafeMutableRawPointer? {
        if let address = idle.withLock({ $0.popLast() }) { return UnsafeMutableRawPointer(bitPattern: address) }
        return malloc(size)
    }

    /// Wraps `count` bytes of `buffer` (from ``take()``) as `Data` that gives the buffer back when released.
    package func data(_ buffer: UnsafeMutableRawPointer, count: Int) -> Data {
        Data(bytesNoCopy: buffer, count: count, deallocator: .custom { [self] pointer, _ in give(pointer) })
    }

    /// Returns a buffer, or frees it when `limit` are idle already.
    package func give(_ buffer: UnsafeMutableRawPointer) {
        let address = UInt(bitPattern: buffer)
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < limit else { return false }
            idle.append(address)
            return true
        }
        if !kept { free(buffer) }
    }

    deinit {
        for address in idle.withLock({ $0 }) { free(UnsafeMutableRawPointer(bitPattern: address)) }
    }
}
