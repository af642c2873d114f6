import Crypto
import Foundation
import GatewayCore

/// Thumbnails already made, kept as files in the state folder (`thumbnails/` under
/// `$XDG_STATE_HOME/gateway`) up to a size limit: the least recently used go first.
///
/// A key names the item's version (remote, path, size, time, version tag) and the thumbnail's
/// size, so a changed file never gets an old picture; files are written under a temporary name
/// and renamed, so a reader never sees half of one.
actor ThumbnailCache {
    let directory: URL
    let limit: Int64
    /// Bytes in the folder (counted once, then kept up to date); `nil` until counted.
    private var used: Int64?

    /// The default limit: 256 MiB.
    static let defaultLimit: Int64 = 256 << 20

    init(directory: URL, limit: Int64 = ThumbnailCache.defaultLimit) {
        self.directory = directory
        self.limit = limit
    }

    /// Previews being made, by key: a second request for the same one waits for the first.
    private var making: [String: Task<Data?, any Error>] = [:]
    /// Previews being made now, and the requests waiting for a turn.
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// Previews made at once (decoding a photo takes a core and its pixels' memory).
    static let concurrentMakes = 4
    /// Requests that may wait for a turn; past them, ``Busy``.
    static let maximumWaiting = 256

    /// Too many previews are waiting to be made: try again later (503).
    struct Busy: Error {}

    /// The preview of `key`: kept in the folder, being made for another request already, or made
    /// now by `make` (at most ``concurrentMakes`` at once) and kept.
    ///
    /// - Throws: ``Busy`` when ``maximumWaiting`` requests wait already; `make`'s errors.
    func thumbnail(for key: String, make: @escaping @Sendable () async throws -> Data?) async throws -> Data? {
        if let kept = data(for: key) { return kept }
        if let task = making[key] { return try await task.value }
        guard running < Self.concurrentMakes || waiting.count < Self.maximumWaiting else { throw Busy() }
        let task = Task<Data?, any Error> {
            await self.turn()
            do {
                let data = try await make()
                self.done()
                return data
            } catch {
                self.done()
                throw error
            }
        }
        making[key] = task
        defer { making[key] = nil }
        let data = try await task.value
        if let data { store(data, for: key) }
        return data
    }

    private func turn() async {
        if running < Self.concurrentMakes {
            running += 1
            return
        }
        // The turn is handed over by `done()` (the count stays).
        await withCheckedContinuation { waiting.append($0) }
    }

    private func done() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// The file name of a key: its SHA-256 in hex.
    static func fileName(_ key: String) -> String {
        ContentHasher.hex(SHA256.hash(data: Data(key.utf8)))
    }

    /// The cached bytes of `key`, or `nil`; a hit counts as a use.
    func data(for key: String) -> Data? {
        guard limit > 0 else { return nil }
        let url = directory.appendingPathComponent(Self.fileName(key))
        guard let data = try? Data(contentsOf: url) else { return nil }
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: url.path)
        return data
    }

    /// Keeps `data` under `key`, then removes the least recently used files above the limit.
    /// A cache that cannot be written is no cache: errors are ignored (the thumbnail is made again).
    func store(_ data: Data, for key: String) {
        guard limit > 0, Int64(data.count) <= limit / 4 else { return }
        let manager = FileManager.default
        try? manager.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(Self.fileName(key))
        // Counted before the new file is there (counted after, it would count twice); a file it
        // replaces no longer counts.
        let before = used ?? count()
        let replaced = ((try? manager.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? 0
        let temporary = directory.appendingPathComponent(".tmp-\(UUID().uuidString)")
        do {
            try data.write(to: temporary)
            if rename(temporary.path, url.path) != 0 {
                try? manager.removeItem(at: temporary)
                return
            }
        } catch {
            try? manager.removeItem(at: temporary)
            return
        }
        let total = before - replaced + Int64(data.count)
        used = total
        if total > limit { evict() }
    }

    private func entries() -> [(url: URL, size: Int64, used: Date)] {
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        let urls = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: keys)) ?? []
        return urls.compactMap { url in
            guard let values = try? url.resourceValues(forKeys: Set(keys)) else { return nil }
            return (url, Int64(values.fileSize ?? 0), values.contentModificationDate ?? .distantPast)
        }
    }

    private func count() -> Int64 {
        entries().reduce(0) { $0 + $1.size }
    }

    /// Removes the oldest-used files until the folder is at three quarters of the limit.
    private func evict() {
        var all = entries()
        var total = all.reduce(0) { $0 + $1.size }
        all.sort { $0.used < $1.used }
        let target = limit / 4 * 3
        for entry in all where total > target {
            if (try? FileManager.default.removeItem(at: entry.url)) != nil { total -= entry.size }
        }
        used = total
    }
}
