import Foundation
import GatewayCore
import Synchronization

/// The bytes a mount fetched from remote files, in sparse cache files (`DIR/read/`), one per item
/// version: an entry holds the ranges programs read, at their offsets, so reading them again (in
/// the same handle, another one, or after the kernel dropped its page cache) asks the remote for
/// nothing. A changed file is another version, so another entry: bytes of two versions are never
/// mixed.
///
/// The size limit is soft, as in `rclone mount`: entries that no open file uses are removed, least
/// recently used first, while the cache holds more than `limit` bytes; an entry in use is kept
/// whole until its last handle closes. Entries of items without a version tag (where the remote
/// can't tell versions apart) belong to their handle alone and go when it closes. The cache
/// starts empty with each mount (which ranges an entry held is known only to the process).
final class ReadCache: Sendable {
    /// Where the cache files are.
    let folder: String
    /// How many bytes idle entries may hold together.
    let limit: Int64
    private let state = Mutex(State())

    private struct Slot {
        var entry: ReadCacheEntry
        var users: Int
        var lastUse: UInt64
    }

    private struct State {
        var slots: [String: Slot] = [:]
        var clock: UInt64 = 0
        /// Bytes held by all entries (shared and private).
        var total: Int64 = 0
    }

    /// A cache in `folder` (emptied first) holding at most about `limit` bytes of idle entries.
    init(folder: String, limit: Int64) throws {
        self.folder = folder
        self.limit = max(0, limit)
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// The entry of the item version `key`, made on first use and held until ``release(_:)``;
    /// `nil` makes a private entry.
    func acquire(_ key: String?) throws -> ReadCacheEntry {
        guard let key else { return try ReadCacheEntry(path: folder + "/" + UUID().uuidString, key: nil) }
        return try state.withLock { state in
            state.clock += 1
            if var slot = state.slots[key] {
                slot.users += 1
                slot.lastUse = state.clock
                state.slots[key] = slot
                return slot.entry
            }
            let entry = try ReadCacheEntry(path: folder + "/" + UUID().uuidString, key: key)
            state.slots[key] = Slot(entry: entry, users: 1, lastUse: state.clock)
            return entry
        }
    }

    /// A handle stopped using `entry`: a private one is removed; the cache shrinks to its limit.
    func release(_ entry: ReadCacheEntry) {
        state.withLock { state in
            guard let key = entry.key else {
                state.total -= entry.count
                entry.remove()
                return
            }
            state.clock += 1
            if var slot = state.slots[key], slot.entry === entry {
                slot.users -= 1
                slot.lastUse = state.clock
                state.slots[key] = slot
            }
            Self.shrink(&state, to: limit)
        }
    }

    /// `entry` now holds `added` more bytes: idle entries make room.
    func grew(by added: Int64) {
        guard added > 0 else { return }
        state.withLock { state in
            state.total += added
            if state.total > limit { Self.shrink(&state, to: limit) }
        }
    }

    /// Bytes the cache holds now.
    var total: Int64 { state.withLock { $0.total } }

    private static func shrink(_ state: inout State, to limit: Int64) {
        while state.total > limit {
            let idle = state.slots.filter { $0.value.users <= 0 }
            guard let oldest = idle.min(by: { $0.value.lastUse < $1.value.lastUse }) else { return }
            state.slots[oldest.key] = nil
            state.total -= oldest.value.entry.count
            oldest.value.entry.remove()
        }
    }
}

/// One item version's sparse cache file and the ranges it holds (``ReadCache``).
final class ReadCacheEntry: Sendable {
    let key: String?
    private let path: String
    private let descriptor: Int32
    private let held = Mutex(ByteRanges())

    init(path: String, key: String?) throws {
        self.path = path
        self.key = key
        descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit { close(descriptor) }

    /// Bytes held.
    var count: Int64 { held.withLock { $0.count } }

    /// The first byte of `range` not held yet.
    func firstMissing(in range: Range<Int64>) -> Int64? { held.withLock { $0.firstMissing(in: range) } }

    /// Stores `data` at `offset`; returns how many bytes the entry holds more than before.
    func write(_ data: Data, at offset: Int64) throws -> Int64 {
        let status = data.withUnsafeBytes { FileDescriptorIO.writeAll(descriptor, $0, at: offset) }
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
        return held.withLock { $0.insert(offset..<(offset + Int64(data.count))) }
    }

    /// The held bytes from `offset`, at most `length`: the caller knows they are held.
    func read(at offset: Int64, length: Int) throws -> Data {
        var data = Data(count: length)
        var total = 0
        try data.withUnsafeMutableBytes { buffer in
            while total < length {
                let result = pread(descriptor, buffer.baseAddress! + total, length - total, off_t(offset) + off_t(total))
                if result < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                if result == 0 { break }
                total += result
            }
        }
        if total < length { data.removeSubrange(total...) }
        return data
    }

    /// Deletes the cache file (the descriptor stays valid for readers still holding the entry).
    func remove() {
        held.withLock { $0 = ByteRanges() }
        unlink(path)
    }
}
