#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Foundation

/// Plain writes to a file descriptor, for the places that hold one (local files, standard output).
public enum FileDescriptorIO {
    /// Writes all of `data` to `fd`, retrying short writes and `EINTR`.
    ///
    /// - Returns: 0 on success, else the `errno` value of the failed write.
    public static func writeAll(_ fd: Int32, _ data: Data) -> Int32 {
        data.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// Writes all of `buffer` to `fd`, retrying short writes and `EINTR`.
    ///
    /// - Returns: 0 on success, else the `errno` value of the failed write.
    public static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32 {
        do {
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return 0
        }
    }

    /// Writes all of `buffer` to `fd` at `offset` (`pwrite`), retrying short writes and `EINTR`.
    ///
    /// - Returns: 0 on success, else the `errno` value of the failed write.
    public static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Int32 {
        var done = 0
        while done < buffer.count {
            let written = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            done += written
        }
        return 0
    }
}
