import CFuse
import Foundation
import GatewayCore

/// One request from the kernel, answered exactly once, from any thread: libfuse's reply
/// functions are thread-safe, so a request is handed to a Swift task and answered when the
/// remote has answered. (The kernel waits for that reply; other requests go on meanwhile.)
struct FUSERequest: @unchecked Sendable {
    let raw: fuse_req_t

    /// Fails the request with an `errno` value.
    func fail(_ code: Int32) {
        _ = fuse_reply_err(raw, code)
    }

    /// Fails the request with the `errno` that stands for `error`.
    func fail(_ error: any Error) {
        fail(Errno.code(for: error))
    }

    /// Answers with nothing (`forget`).
    func none() {
        fuse_reply_none(raw)
    }

    /// Answers a `lookup` with an entry the kernel keeps for `timeout` seconds.
    func entry(inode: UInt64, attributes: stat, timeout: Double) {
        var entry = fuse_entry_param()
        entry.ino = fuse_ino_t(inode)
        entry.attr = attributes
        entry.attr_timeout = timeout
        entry.entry_timeout = timeout
        _ = fuse_reply_entry(raw, &entry)
    }

    /// Answers a `lookup` of a name that does not exist, cached as such for `timeout` seconds.
    func negativeEntry(timeout: Double) {
        var entry = fuse_entry_param()
        entry.ino = 0
        entry.entry_timeout = timeout
        _ = fuse_reply_entry(raw, &entry)
    }

    /// Answers a `getattr`.
    func attributes(_ attributes: stat, timeout: Double) {
        var attributes = attributes
        _ = fuse_reply_attr(raw, &attributes, timeout)
    }

    /// Answers an `open` or `opendir` with the handle `handle`; `cacheListing` lets the kernel
    /// keep a folder's listing until it is told the folder changed (`FOPEN_CACHE_DIR`).
    func open(handle: UInt64, keepCache: Bool, cacheListing: Bool = false) {
        var info = fuse_file_info()
        info.fh = handle
        info.keep_cache = keepCache || cacheListing ? 1 : 0
        info.cache_readdir = cacheListing ? 1 : 0
        _ = fuse_reply_open(raw, &info)
    }

    /// Answers a `readlink` with the link's target.
    func link(_ target: String) {
        _ = target.withCString { fuse_reply_readlink(raw, $0) }
    }

    /// Answers a `getxattr` or `listxattr`: the value's length when the caller asks for it
    /// (`size` 0), `ERANGE` when its buffer is too small, else the value.
    func attributeValue(_ data: Data, size: Int) {
        if size == 0 {
            _ = fuse_reply_xattr(raw, data.count)
        } else if size < data.count {
            fail(ERANGE)
        } else {
            buffer(data)
        }
    }

    /// Answers a `read` or `readdir` with bytes.
    func buffer(_ data: Data) {
        data.withUnsafeBytes { bytes in
            _ = fuse_reply_buf(raw, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        }
    }

    /// Answers a `read` with bytes in several pieces, in order, without joining them first
    /// (`fuse_reply_iov`: the kernel copies each piece once).
    func buffers(_ parts: [Data]) {
        guard parts.count > 1 else { return buffer(parts.first ?? Data()) }
        var vectors: [iovec] = []
        vectors.reserveCapacity(parts.count)
        func reply(from index: Int) {
            guard index < parts.count else {
                _ = fuse_reply_iov(raw, vectors, Int32(vectors.count))
                return
            }
            parts[index].withUnsafeBytes { bytes in
                vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count))
                reply(from: index + 1)
            }
        }
        reply(from: 0)
    }

    /// Answers a `statfs`.
    func statfs(_ info: statvfs) {
        var info = info
        _ = fuse_reply_statfs(raw, &info)
    }
}
