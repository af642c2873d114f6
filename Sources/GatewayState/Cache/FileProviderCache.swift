public import Foundation
public import GatewayCore
import Synchronization

/// Local copies of remote files' contents, as Apple's File Provider keeps them: an item is a
/// *placeholder* until bytes of it are fetched (*partial*), and *materialized* once the cache
/// holds all of them. Each item version has a sparse cache file of its own, holding the ranges
/// fetched at their offsets (bytes of two versions are never mixed: another version is another
/// entry). `gateway mount` is one client; an app without FUSE can use it over any provider:
///
/// ```swift
/// let cache = try FileProviderCache(folder: cacheFolder, limit: 200 << 20, pins: pins)
/// try cache.pin("/photos", needing: 80 << 20)              // kept, never evicted
/// let item = try await provider.attributesOfItem(path: "/photos/a.jpg")
/// try await cache.materialize(item, from: provider)        // every byte, at this version
/// cache.state(of: FileProviderCache.Key(item)!)            // .materialized
/// ```
///
/// The size `limit` is hard, and counts what the disk holds (each stored range rounded out to
/// the file system's ``allocationUnit``, as `du` counts it, and one unit more for a file of over
/// 256 units, whose pieces may need a block of the file system's own to map them: ext4 maps 4
/// extents in the inode, then 340 in each 4 KiB block `du` counts): room is made before bytes are
/// stored, by removing entries nobody uses, least recently used first, and never pinned ones. Bytes that still don't fit are not
/// stored (a reader gets them all the same; they are fetched again when read again), and
/// ``materialize(_:from:)`` fails with ``CacheError/full``. Pins (``pin(_:needing:)``) are
/// paths, kept in the state store when the cache has a ``PinList``; an item is pinned when its
/// path or a folder above it is, so what appears in a pinned folder is pinned too.
public final class FileProviderCache: Sendable {
    /// One item version: what an entry holds bytes of.
    public struct Key: Hashable, Sendable {
        /// The item's path on the remote.
        public var path: String
        /// Its version tag. Keys compare it without an ETag's weak marker (the same version is
        /// seen with and without it: ``VersionTag/same(_:_:)``).
        public var version: String
        /// Its size.
        public var size: Int64
        /// A client's own count of changes it made to the item (the mount counts its uploads
        /// and renames), for versions a remote's tag does not tell apart.
        public var generation: UInt64

        public init(path: String, version: String, size: Int64, generation: UInt64 = 0) {
            self.path = path
            self.version = version
            self.size = size
            self.generation = generation
        }

        public static func == (a: Key, b: Key) -> Bool {
            a.path == b.path && VersionTag.same(a.version, b.version) && a.size == b.size && a.generation == b.generation
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(path)
            hasher.combine(VersionTag.opaque(version))
            hasher.combine(size)
            hasher.combine(generation)
        }

        /// The key of a listed file: `nil` without a version tag or a size (such an item's bytes
        /// can't be known to be the same from one read to the next).
        public init?(_ item: FileObject, generation: UInt64 = 0) {
            guard let version = item.versionTag, let size = item.size, item.type == .file else { return nil }
            self.init(path: item.path, version: version, size: size, generation: generation)
        }
    }

    /// How much of an item the cache holds.
    public enum ItemState: String, Sendable {
        /// Nothing: only what a listing said of it.
        case placeholder
        /// Some of its bytes.
        case partial
        /// All of them.
        case materialized
    }

    /// What the cache holds, in bytes.
    public struct Usage: Sendable, Equatable {
        /// Bytes stored.
        public var total: Int64
        /// Bytes of pinned items stored.
        public var pinned: Int64
        /// Bytes the pins are expected to need (what was said at ``pin(_:needing:)``).
        public var pinnedExpected: Int64
        /// The hard limit.
        public var limit: Int64
        /// Item versions with bytes stored.
        public var entries: Int
    }

    /// Why the cache refused.
    public enum CacheError: Error, CustomStringConvertible, Equatable {
        /// No room can be made for what must be stored: the rest is pinned or in use.
        case full(needed: Int64, limit: Int64)
        /// Pinned content would need more than the limit.
        case pinsExceedLimit(needed: Int64, limit: Int64)
        /// The item is pinned, open or being fetched.
        case busy(path: String)

        public var description: String {
            switch self {
            case .full(let needed, let limit):
                "the cache has no room for \(needed) more bytes: its limit is \(limit) bytes and the rest is pinned or in use"
            case .pinsExceedLimit(let needed, let limit):
                "pinned content would need \(needed) bytes, more than the cache's limit of \(limit) bytes "
                    + "(unpin something, or give the mount a larger --cache-max-size)"
            case .busy(let path):
                "\(path) is pinned or in use; its content stays"
            }
        }
    }

    /// Where the cache files are.
    public let folder: String
    /// The most bytes the cache holds.
    public let limit: Int64
    /// The file system's allocation unit in `folder`: what the cache counts is what the disk
    /// holds, each stored range rounded out to whole units (a byte written takes a unit).
    public let allocationUnit: Int64
    private let pinList: PinList?
    private let index: CacheIndex?
    private let state: Mutex<State>

    private struct Slot {
        var entry: Entry
        var users: Int
        var lastUse: ContinuousClock.Instant
        /// Bytes the index says the entry holds.
        var indexed: Int64 = 0
    }

    private struct State {
        var slots: [Key: Slot] = [:]
        /// Bytes held by all entries (shared and private).
        var total: Int64 = 0
        /// Pinned paths, with the bytes each is expected to need.
        var pins: [String: Int64] = [:]
        /// Indexed files removed since the last ``persist()``.
        var unindexed: [String] = []
    }

    /// A cache in `folder` holding at most `limit` bytes; pins are read from and kept in `pins`
    /// when given. With an `index`, what an earlier run kept (and the index lists) is there
    /// again, and everything else in the folder is removed; without one the folder starts empty.
    public init(folder: String, limit: Int64, pins: PinList? = nil, index: CacheIndex? = nil) throws {
        self.folder = folder
        self.limit = max(0, limit)
        self.pinList = pins
        self.index = index
        var initial = State()
        for path in try pins?.paths() ?? [] { initial.pins[path] = 0 }
        state = Mutex(initial)
        if index == nil { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        var fileSystem = statvfs()
        let unit = statvfs(folder, &fileSystem) == 0 ? Int64(fileSystem.f_frsize) : 4096
        allocationUnit = (512...(1 << 20)).contains(unit) ? unit : 4096
        if let index { try reopen(index) }
    }

    /// Takes back the files the index lists (those whose file is still there, as large as the
    /// ranges say), removes the rest, and keeps within the limit.
    private func reopen(_ index: CacheIndex) throws {
        var kept = Set<String>()
        var dropped: [String] = []
        for row in try index.rows() {
            let path = folder + "/" + row.file
            var info = stat()
            guard !row.file.contains("/"), stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
                  Int64(info.st_size) >= (row.ranges.last?.upperBound ?? 0),
                  let entry = try? Entry(path: path, key: row.key, cache: self, reopening: row.ranges) else {
                dropped.append(row.file)
                continue
            }
            kept.insert(row.file)
            state.withLock { state in
                state.total += entry.diskCount
                state.slots[row.key] = Slot(entry: entry, users: 0, lastUse: .now, indexed: entry.count)
            }
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !kept.contains(name) {
            unlink(folder + "/" + name)
        }
        state.withLock { state in
            state.unindexed += dropped
            Self.shrink(&state, to: limit)
        }
        try persist()
    }

    /// Writes what the entries hold to the index (after their bytes are on disk): called now and
    /// then, and at the end. Entries of items the client changed itself (a generation above 0)
    /// are not indexed: the next run counts from 0 again.
    public func persist() throws {
        guard let index else { return }
        let (changed, removed) = state.withLock { state -> ([(Key, Entry, Int64)], [String]) in
            let changed = state.slots.compactMap { key, slot -> (Key, Entry, Int64)? in
                let count = slot.entry.count
                return key.generation == 0 && count != slot.indexed ? (key, slot.entry, count) : nil
            }
            defer { state.unindexed = [] }
            return (changed, state.unindexed)
        }
        var rows: [CacheIndex.Row] = []
        for (key, entry, _) in changed {
            guard entry.synchronize() else { continue }
            rows.append(CacheIndex.Row(file: entry.fileName, key: key, ranges: entry.heldRanges))
        }
        try index.update(rows, removing: removed)
        state.withLock { state in
            for (key, entry, count) in changed where state.slots[key]?.entry === entry { state.slots[key]?.indexed = count }
        }
    }

    // MARK: Entries

    /// The entry of the item version `key`, made on first use and held until ``release(_:)``
    /// (an entry in use is never removed); `nil` makes a private entry, removed at its release.
    public func acquire(_ key: Key?) throws -> Entry {
        guard let key else { return try Entry(path: folder + "/" + UUID().uuidString, key: nil, cache: self) }
        return try state.withLock { state in
            if var slot = state.slots[key] {
                slot.users += 1
                slot.lastUse = .now
                state.slots[key] = slot
                return slot.entry
            }
            let entry = try Entry(path: folder + "/" + UUID().uuidString, key: key, cache: self)
            state.slots[key] = Slot(entry: entry, users: 1, lastUse: .now)
            return entry
        }
    }

    /// A user stopped using `entry`: a private one is removed.
    public func release(_ entry: Entry) {
        state.withLock { state in
            guard let key = entry.key else {
                state.total -= entry.remove()
                return
            }
            if var slot = state.slots[key], slot.entry === entry {
                slot.users -= 1
                slot.lastUse = .now
                state.slots[key] = slot
            }
        }
    }

    /// Room for `count` more bytes, made by removing idle, unpinned entries (least recently used
    /// first); `false` when it can't be made.
    fileprivate func reserve(_ count: Int64) -> Bool {
        guard count > 0 else { return true }
        return state.withLock { state in
            if state.total + count > limit { Self.shrink(&state, to: limit - count) }
            guard state.total + count <= limit else { return false }
            state.total += count
            return true
        }
    }

    /// Gives back `count` bytes reserved and not stored.
    fileprivate func unreserve(_ count: Int64) {
        guard count > 0 else { return }
        state.withLock { $0.total -= count }
    }

    private static func shrink(_ state: inout State, to target: Int64) {
        guard state.total > target else { return }
        let pins = state.pins
        let idle = state.slots.filter { $0.value.users <= 0 && !Self.isPinned($0.key.path, pins: pins) }
            .sorted { $0.value.lastUse < $1.value.lastUse }
        for (key, _) in idle {
            guard state.total > target else { return }
            Self.drop(key, from: &state)
        }
    }

    /// Removes the entry of `key` and its file; returns the bytes it held.
    @discardableResult
    private static func drop(_ key: Key, from state: inout State) -> Int64 {
        guard let slot = state.slots.removeValue(forKey: key) else { return 0 }
        let freed = slot.entry.remove()
        state.total -= freed
        if slot.indexed > 0 || key.generation == 0 { state.unindexed.append(slot.entry.fileName) }
        return freed
    }

    // MARK: Items

    /// How much of the item version `key` is stored.
    public func state(of key: Key) -> ItemState {
        guard key.size > 0 else { return .materialized }
        guard let entry = state.withLock({ $0.slots[key]?.entry }) else { return .placeholder }
        let held = entry.count
        return held >= key.size ? .materialized : held > 0 ? .partial : .placeholder
    }

    /// Every item version all of whose bytes are stored.
    public func materialized() -> [Key] {
        state.withLock { state in state.slots.filter { $0.key.size == 0 || $0.value.entry.count >= $0.key.size }.map(\.key) }
            .sorted { ($0.path, $0.version) < ($1.path, $1.version) }
    }

    /// Fetches every byte of `item` the cache does not hold yet, at its version (a ranged,
    /// version-checked read per missing range), and keeps them. Throws ``CacheError/full`` when
    /// they can't all be kept, and the provider's error when the item changed or can't be read.
    public func materialize(_ item: FileObject, generation: UInt64 = 0, from provider: any FileProviderReadWrite) async throws {
        guard let key = Key(item, generation: generation) else {
            throw FileProviderError.unsupported(operation: "keeping an item the remote gives no version tag or size", path: item.path)
        }
        let entry = try acquire(key)
        defer { release(entry) }
        while let gap = entry.firstGap(in: 0..<key.size) {
            let options = ReadOptions(offset: gap.lowerBound, length: gap.upperBound - gap.lowerBound, ifVersion: key.version)
            var at = gap.lowerBound
            for try await chunk in try await provider.readStream(path: key.path, options: options) {
                let piece = chunk.prefix(Int(gap.upperBound - at))
                guard try entry.write(piece, at: at) else { throw CacheError.full(needed: key.size - entry.count, limit: limit) }
                at += Int64(piece.count)
                if at >= gap.upperBound { break }
            }
            if at < gap.upperBound {
                throw FileProviderError.truncated(path: key.path, reason: "it ended at \(at) bytes; it was listed with \(key.size)")
            }
        }
    }

    /// Removes what is stored of items at `path` or under it that nobody uses and that aren't
    /// pinned; returns the disk bytes freed. Throws ``CacheError/busy(path:)`` for a pinned path.
    @discardableResult
    public func evict(_ path: String) throws -> Int64 {
        try state.withLock { state in
            if Self.isPinned(path, pins: state.pins) { throw CacheError.busy(path: path) }
            var freed: Int64 = 0
            for (key, slot) in state.slots where slot.users <= 0 && Self.isAt(key.path, orUnder: path) {
                freed += Self.drop(key, from: &state)
            }
            return freed
        }
    }

    /// Removes stored items nobody used for `age` (pinned ones stay); returns the disk bytes freed.
    @discardableResult
    public func evictIdle(olderThan age: Duration) -> Int64 {
        let cutoff = ContinuousClock.now - age
        return state.withLock { state in
            var freed: Int64 = 0
            for (key, slot) in state.slots where slot.users <= 0 && slot.lastUse < cutoff && !Self.isPinned(key.path, pins: state.pins) {
                freed += Self.drop(key, from: &state)
            }
            return freed
        }
    }

    /// Removes what is stored of versions of `path` other than `keep` that nobody uses (a pinned
    /// item was fetched again at its new version).
    public func dropOtherVersions(of path: String, keeping keep: Key?) {
        state.withLock { state in
            for (key, slot) in state.slots where key.path == path && key != keep && slot.users <= 0 {
                Self.drop(key, from: &state)
            }
        }
    }

    /// The item at `path` (and everything under it) is gone from the remote: what is stored of
    /// it goes, pinned or not, except entries in use.
    public func discard(_ path: String) {
        state.withLock { state in
            for (key, slot) in state.slots where slot.users <= 0 && Self.isAt(key.path, orUnder: path) {
                Self.drop(key, from: &state)
            }
        }
    }

    // MARK: Pins

    /// Pins `path` (an item or a folder: everything under it), expected to need `bytes`:
    /// refused with ``CacheError/pinsExceedLimit(needed:limit:)`` when the pins would need more
    /// than the limit. Pinned items are never evicted; fetching them is the caller's
    /// (``materialize(_:from:)``).
    public func pin(_ path: String, needing bytes: Int64) throws {
        try state.withLock { state in
            var pins = state.pins
            pins[path] = max(0, bytes)
            let needed = Self.expected(pins, slots: state.slots)
            if needed > limit { throw CacheError.pinsExceedLimit(needed: needed, limit: limit) }
            try pinList?.add(path)
            state.pins = pins
        }
    }

    /// Unpins `path` and what is under it (their contents stay, evictable again).
    public func unpin(_ path: String) throws {
        try state.withLock { state in
            try pinList?.remove(path)
            state.pins = state.pins.filter { !Self.isAt($0.key, orUnder: path) }
        }
    }

    /// Whether `path` is pinned: itself, or a folder above it.
    public func isPinned(_ path: String) -> Bool {
        state.withLock { Self.isPinned(path, pins: $0.pins) }
    }

    /// Whether `path` itself was pinned (not only a folder above it).
    public func isPinRoot(_ path: String) -> Bool {
        state.withLock { $0.pins[path] != nil }
    }

    /// The pinned paths (each with what is under it).
    public var pins: [String] { state.withLock { $0.pins.keys.sorted() } }

    /// A pinned path moved (a rename): its pin, and pins under it, move along.
    public func movePins(from source: String, to destination: String) throws {
        try state.withLock { state in
            try pinList?.move(from: source, to: destination)
            var moved: [String: Int64] = [:]
            for (path, bytes) in state.pins {
                moved[Self.isAt(path, orUnder: source) ? destination + path.dropFirst(source.count) : path] = bytes
            }
            state.pins = moved
        }
    }

    /// What the cache holds.
    public var usage: Usage {
        state.withLock { state in
            let pinned = state.slots.filter { Self.isPinned($0.key.path, pins: state.pins) }.reduce(Int64(0)) { $0 + $1.value.entry.count }
            return Usage(total: state.total, pinned: pinned, pinnedExpected: Self.expected(state.pins, slots: state.slots), limit: limit,
                         entries: state.slots.count)
        }
    }

    /// Bytes the pins need: nested pins are counted once, by their outermost folder.
    /// Each counts what it was expected to need when pinned or what it holds now, whichever is
    /// more (a pinned folder grows as the remote adds to it).
    private static func expected(_ pins: [String: Int64], slots: [Key: Slot]) -> Int64 {
        pins.filter { pin in !pins.keys.contains { $0 != pin.key && isAt(pin.key, orUnder: $0) } }
            .reduce(Int64(0)) { total, pin in
                let held = slots.reduce(Int64(0)) { isAt($1.key.path, orUnder: pin.key) ? $0.saturatingAdding($1.value.entry.count) : $0 }
                return total.saturatingAdding(max(pin.value, held))
            }
    }

    static func isPinned(_ path: String, pins: [String: Int64]) -> Bool {
        guard !pins.isEmpty else { return false }
        if pins[path] != nil { return true }
        var current = Substring(path)
        while let slash = current.lastIndex(of: "/") {
            current = current[..<slash]
            if pins[current.isEmpty ? "/" : String(current)] != nil { return true }
        }
        return false
    }

    static func isAt(_ path: String, orUnder folder: String) -> Bool {
        path == folder || folder == "/" || path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
    }

    // MARK: Entry

    /// One item version's sparse cache file and the ranges it holds.
    public final class Entry: Sendable {
        /// The item version (`nil`: a private entry).
        public let key: Key?
        private let path: String
        private let descriptor: Int32
        private let held = Mutex(Held())
        private unowned let cache: FileProviderCache

        fileprivate init(path: String, key: Key?, cache: FileProviderCache, reopening ranges: [Range<Int64>]? = nil) throws {
            self.path = path
            self.key = key
            self.cache = cache
            descriptor = open(path, ranges == nil ? O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC : O_RDWR | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if let ranges {
                let rounded = ranges.map(units(of:))
                held.withLock { held in
                    for range in ranges { held.ranges.insert(range) }
                    for range in rounded { held.units.insert(range) }
                }
            }
        }

        /// The cache file's name in the cache's folder.
        var fileName: String { (path as NSString).lastPathComponent }

        /// The ranges held.
        var heldRanges: [Range<Int64>] { held.withLock { $0.ranges.ranges } }

        /// Puts the bytes written on disk; `false` when that failed (or the entry was removed).
        func synchronize() -> Bool {
            guard !held.withLock({ $0.removed }) else { return false }
            return fdatasync(descriptor) == 0
        }

        private struct Held {
            var ranges = ByteRanges()
            /// `ranges` rounded out to allocation units: what the disk holds.
            var units = ByteRanges()
            /// Removed from the cache: stores nothing more.
            var removed = false

            /// What the disk holds: the units, and the map's unit (see ``disk(units:unit:)``).
            func disk(unit: Int64) -> Int64 { Entry.disk(units: units.count, unit: unit) }
        }

        /// What a file of `units` bytes in allocation units of `unit` takes on disk: those, and one
        /// unit more for its extent map once it has over ``mapUnits`` of them.
        static func disk(units: Int64, unit: Int64) -> Int64 { units + (units > mapUnits * unit ? unit : 0) }

        /// Units a file holds before its map is counted. ext4 maps 4 extents in the inode and 340
        /// more in each 4 KiB block; a small file is written at once and lies in one or a few
        /// extents, while a large one filled piece by piece among other writes (read-ahead, pins)
        /// lies in many: one block maps as many as a cache file of a few hundred MiB written in
        /// pieces of 1 MiB or more has. (Seen: 4 KiB over a 200 MiB limit without it.)
        static let mapUnits: Int64 = 256

        deinit { close(descriptor) }

        /// Bytes held.
        public var count: Int64 { held.withLock { $0.ranges.count } }

        /// Bytes the held ranges take on disk: whole allocation units.
        var diskCount: Int64 { held.withLock { $0.disk(unit: cache.allocationUnit) } }

        /// `range` rounded out to whole allocation units.
        private func units(of range: Range<Int64>) -> Range<Int64> {
            let unit = cache.allocationUnit
            let lower = range.lowerBound / unit * unit
            let upper = range.upperBound
            let rounded = upper % unit == 0 ? upper : min(Int64.max / unit, upper / unit + 1) * unit
            return lower..<max(lower, rounded)
        }

        /// The first byte of `range` not held yet.
        public func firstMissing(in range: Range<Int64>) -> Int64? { held.withLock { $0.ranges.firstMissing(in: range) } }

        /// The first run of bytes of `range` not held yet.
        public func firstGap(in range: Range<Int64>) -> Range<Int64>? { held.withLock { $0.ranges.firstGap(in: range) } }

        /// Stores `data` at `offset` when the cache has room for it; `false` when it has not
        /// (nothing stored). Throws when the cache file can't be written.
        @discardableResult
        public func write(_ data: Data, at offset: Int64) throws -> Bool {
            let range = offset..<(offset + Int64(data.count))
            let rounded = units(of: range)
            // What is reserved is disk: the allocation units the range touches that hold nothing
            // yet, and the map's unit when the file grows past `mapUnits` units.
            let unit = cache.allocationUnit
            guard let (missing, wanted) = held.withLock({ held -> (Int64, Int64)? in
                guard !held.removed else { return nil }
                let units = held.units.count
                return (held.ranges.missingCount(in: range),
                        Self.disk(units: units + held.units.missingCount(in: rounded), unit: unit) - Self.disk(units: units, unit: unit))
            }) else { return false }
            guard missing > 0 else { return true }
            guard cache.reserve(wanted) else { return false }
            let status = data.withUnsafeBytes { FileDescriptorIO.writeAll(descriptor, $0, at: offset) }
            guard status == 0 else {
                cache.unreserve(wanted)
                throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO)
            }
            let added = held.withLock { held -> Int64 in
                guard !held.removed else { return 0 }
                held.ranges.insert(range)
                let before = held.disk(unit: unit)
                held.units.insert(rounded)
                return held.disk(unit: unit) - before
            }
            // Another writer stored some of the same units meanwhile.
            cache.unreserve(wanted - added)
            return true
        }

        /// The held bytes from `offset`, at most `length` (the caller knows they are held).
        public func read(at offset: Int64, length: Int) throws -> Data {
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

        /// Deletes the cache file (the descriptor stays valid for readers still holding the
        /// entry); returns the bytes it held.
        fileprivate func remove() -> Int64 {
            let unit = cache.allocationUnit
            let count = held.withLock { held in
                defer { held = Held(ranges: ByteRanges(), units: ByteRanges(), removed: true) }
                return held.disk(unit: unit)
            }
            unlink(path)
            return count
        }
    }
}
