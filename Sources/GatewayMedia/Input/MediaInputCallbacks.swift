import Foundation
import Synchronization

/// A ``MediaInput`` behind a C library's read callback (TagLib's stream, FFmpeg's I/O context):
/// `read(_:_:_:)` is the callback's body, and keeps the input's first error (network,
/// cancellation) for the caller to throw once the library has given up.
final class MediaInputCallbacks: Sendable {
    let input: any MediaInput
    private let failure = Mutex<(any Error)?>(nil)

    init(input: any MediaInput) { self.input = input }

    /// The input's error, once a read failed.
    var error: (any Error)? { failure.withLock { $0 } }

    /// Reads up to `length` bytes at `offset`: the count (0 at the end), or -1 once a read failed.
    func read(_ offset: Int64, _ buffer: UnsafeMutableRawPointer, _ length: Int64) -> Int64 {
        guard failure.withLock({ $0 == nil }) else { return -1 }
        do {
            return Int64(try input.read(at: offset, into: buffer, count: Int(clamping: max(0, length))))
        } catch {
            failure.withLock { $0 = error }
            return -1
        }
    }
}
