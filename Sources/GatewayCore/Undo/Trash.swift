public import Foundation

/// A remote's trash: moving items in (a rename), listing, restoring and emptying, written once for
/// every backend over the hooks of ``TrashVolume``.
///
/// Trashing keeps the record first (a `.trashinfo` file, or the item's name in a network trash) and
/// then renames the item into `files/`, so an interruption leaves at worst a record without an item
/// (not listed), never an item nobody can trace. Restoring renames it back, then drops the record.
public final class Trash: Sendable {
    /// Where the trash folders are.
    public let locator: any TrashLocator

    /// Creates a trash over `locator`.
    public init(locator: any TrashLocator) {
        self.locator = locator
    }

    /// Moves the item at `path` into the trash: one rename on the provider.
    ///
    /// - Returns: the item as the trash now holds it.
    /// - Throws: the provider's error when the item is missing or cannot be renamed (nothing changed then).
    @discardableResult
    public func trashItem(at path: String, date: Date = Date()) async throws -> TrashedItem {
        let path = try RemotePath.normalize(path)
        guard path != "/" else { throw FileProviderError.invalidPath(path: path, reason: "the remote's root cannot go to the trash") }
        let volume = try await locator.volume(for: path)
        if let folder = volume.folderPath, path == folder || RemotePath.relative(path, to: folder) != nil {
            throw FileProviderError.invalidPath(path: path, reason: "it is in the trash already; use `gateway trash empty`")
        }
        let info = TrashInfo(path: volume.recordedPath(for: path), deletionDate: date)
        let base = Self.baseName(RemotePath.lastComponent(of: path))
        var claimed: String?
        for attempt in 1...Self.nameAttempts where claimed == nil {
            claimed = try await volume.reserve(info, base: base, attempt: attempt)
        }
        guard let reserved = claimed else {
            throw CocoaError.described(.fileWriteFileExists, path: path, reason: "no free name in the trash for \(base)")
        }
        let name: String
        do {
            name = try await volume.moveIn(path, as: reserved)
        } catch {
            try? await volume.removeInfo(of: reserved)
            throw error
        }
        return TrashedItem(name: name, volume: volume.identifier, originalPath: path, recordedPath: info.path, deletionDate: date)
    }

    /// Every item in the trash that came from `path` or below on this provider, one trash folder
    /// after another, read as listed (never all held at once). Items whose record cannot be read
    /// are listed with no original path (only for the root).
    public func items(under path: String = "/") -> PullSequence<TrashedItem> {
        let locator = locator
        let folder = (try? RemotePath.normalize(path)) ?? "/"
        return PullSequence {
            var volumes: [any TrashVolume]?
            var current: (volume: any TrashVolume, entries: PullSequence<TrashEntry>.AsyncIterator)?
            return {
                while true {
                    if current == nil {
                        if volumes == nil { volumes = try await locator.volumes(under: folder).reversed() }
                        guard let volume = volumes?.popLast() else { return nil }
                        current = (volume, volume.entries().makeAsyncIterator())
                    }
                    guard let entry = try await current!.entries.next() else {
                        current = nil
                        continue
                    }
                    if let item = try await Self.describe(entry, in: current!.volume), Self.lies(item.originalPath, in: folder) { return item }
                }
            }
        }
    }

    /// The item `name` in the trash `volume` (as listed), or `nil`.
    public func item(named name: String, volume identifier: String) async throws -> TrashedItem? {
        guard let volume = try await locator.volume(identifier: identifier) else { return nil }
        return try await Self.describe(TrashEntry(name: name), in: volume)
    }

    /// Moves a trashed item back to `path` (its original path by default). Fails, changing nothing,
    /// when something is there; the folder it goes into must exist.
    public func restore(_ item: TrashedItem, to path: String? = nil) async throws {
        guard let target = path ?? item.originalPath else {
            throw FileProviderError.invalidPath(path: item.recordedPath, reason: "the trash does not say where \(item.name) came from")
        }
        let volume = try await volume(of: item)
        let destination = try RemotePath.normalize(target)
        if let folder = volume.folderPath, destination == folder || RemotePath.relative(destination, to: folder) != nil {
            throw FileProviderError.invalidPath(path: destination, reason: "an item cannot be restored into the trash")
        }
        try await volume.moveOut(item.name, to: destination)
        try await volume.removeInfo(of: item.name)
    }

    /// Removes a trashed item for good.
    public func delete(_ item: TrashedItem) async throws {
        let volume = try await volume(of: item)
        try await volume.removeContent(of: item.name)
        try await volume.removeInfo(of: item.name)
    }

    /// Removes for good every item trashed before `date` (every item when `nil`; an item without a
    /// readable date only then). Returns how many went.
    @discardableResult
    public func empty(olderThan date: Date? = nil, under path: String = "/") async throws -> Int {
        // Names first, then removals: a listing is not read while it changes under it.
        var doomed: [TrashedItem] = []
        for try await item in items(under: path) {
            if let date {
                guard let deleted = item.deletionDate, deleted < date else { continue }
            }
            doomed.append(item)
        }
        for item in doomed { try await delete(item) }
        return doomed.count
    }

    /// Provider paths of trash folders inside the provider's tree, which copies and listings skip.
    public func folderPaths() async -> [String] {
        ((try? await locator.volumes(under: "/")) ?? []).compactMap(\.folderPath)
    }

    // MARK: Helpers

    private func volume(of item: TrashedItem) async throws -> any TrashVolume {
        guard let volume = try await locator.volume(identifier: item.volume) else {
            throw CocoaError.described(.fileNoSuchFile, path: item.recordedPath, reason: "trash \(item.volume) is gone")
        }
        return volume
    }

    /// Whether `path` is `folder` or below it (an unreadable record only at the root).
    static func lies(_ path: String?, in folder: String) -> Bool {
        guard let path else { return folder == "/" }
        return folder == "/" || path == folder || path.hasPrefix(folder + "/")
    }

    private static func describe(_ entry: TrashEntry, in volume: any TrashVolume) async throws -> TrashedItem? {
        let name = entry.name
        let info: TrashInfo
        do {
            info = try await volume.info(of: name)
        } catch where error.failureKind == .notFound {
            return nil
        } catch where error.failureKind == .malformedResponse || (error as? CocoaError)?.code == .fileReadTooLarge {
            // Listed (with no original path) only from a trash of this provider's own: a desktop
            // trash shared with the whole machine holds others' records, never to be emptied here.
            guard volume.folderPath != nil else { return nil }
            return TrashedItem(name: name, volume: volume.identifier, originalPath: nil, recordedPath: "", deletionDate: nil)
        }
        guard let original = volume.providerPath(forRecorded: info.path) else { return nil }
        var attributes = entry.attributes
        if attributes == nil { attributes = try? await volume.attributes(of: name) }
        return TrashedItem(name: name, volume: volume.identifier, originalPath: original, recordedPath: info.path,
                           deletionDate: info.deletionDate, type: attributes?.type, size: attributes?.size)
    }

    /// Names tried for one item before giving up.
    static let nameAttempts = 50

    /// The item's name, cut to leave room for a suffix and `.trashinfo` within 255 bytes.
    public static func baseName(_ name: String) -> String {
        var base = name.isEmpty ? "item" : name
        while base.utf8.count > 200 { base.removeLast() }
        return base
    }

    /// `NAME`, `NAME.2`, … `NAME.19`, then `NAME.RANDOM`: the names a trash that can claim a name
    /// exclusively tries, as file managers do.
    public static func candidate(_ base: String, attempt: Int) -> String {
        attempt == 1 ? base : attempt < 20 ? "\(base).\(attempt)" : "\(base).\(randomSuffix())"
    }

    /// A short random suffix (base 36).
    public static func randomSuffix() -> String {
        String(UInt64.random(in: 0...UInt64.max) >> 16, radix: 36)
    }
}

/// The trash of a network remote: a folder on the remote (`trash_dir`, by default
/// `/.gateway-trash`) driven through the provider's own operations. Trashing is the provider's
/// server-side rename (WebDAV `MOVE`, FTP `RNFR`/`RNTO`) into `files/`, under a name that is its
/// own record: the original path and the deletion time, escaped,
/// `=2Fdocs=2Freport.pdf~20261124T153000Z~k3x9q2`. So trashing costs one request, and listing the
/// trash one folder listing. Only a path too long for a 255-byte name gets a FreeDesktop record
/// of its own, `info/NAME.trashinfo` (one more request).
public final class ProviderTrashVolume: TrashVolume, TrashLocator {
    /// The provider the trash lives on.
    public let provider: any FileProviderOperations & FileProviderReadWrite
    /// The trash folder's path on the provider.
    public let folder: String

    /// Creates the trash at `folder` (a provider path, not the root) on `provider`.
    public init(provider: any FileProviderOperations & FileProviderReadWrite, folder: String) {
        self.provider = provider
        self.folder = folder
    }

    public var identifier: String { folder }
    public var folderPath: String? { folder }

    private var files: String { folder + "/files" }
    private var infos: String { folder + "/info" }

    public func volume(for path: String) async throws -> any TrashVolume { self }

    public func volumes(under path: String) async throws -> [any TrashVolume] { [self] }

    public func volume(identifier: String) async throws -> (any TrashVolume)? { identifier == folder ? self : nil }

    public func isTrashFolder(_ path: String) -> Bool { path == folder }

    // MARK: Names that are records

    /// `PATH~STAMP~RANDOM`: the recorded path with every byte but `A-Z a-z 0-9 - . _` written as
    /// `=XX` (so `/` and `~` never appear in it, nor `%`, which some servers decode in a `MOVE`'s
    /// destination), the deletion time in UTC to the second.
    public static func recordName(for info: TrashInfo, random: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var escaped: [UInt8] = []
        for byte in info.path.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                escaped.append(byte)
            default:
                escaped += [UInt8(ascii: "="), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return "\(String(decoding: escaped, as: UTF8.self))~\(stamp(info.deletionDate ?? Date()))~\(random)"
    }

    /// The record a name made by ``recordName(for:random:)`` holds, or `nil` for another name.
    public static func record(inName name: String) -> TrashInfo? {
        let parts = name.split(separator: "~", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].hasPrefix("=2F"), !parts[2].isEmpty,
              let path = unescape(parts[0]), let date = parseStamp(parts[1]) else { return nil }
        return TrashInfo(path: path, deletionDate: date)
    }

    /// Reverses the `=XX` escapes; `nil` for a broken one, a NUL or bytes that are not UTF-8.
    private static func unescape(_ text: Substring) -> String? {
        HexEscapes.decode(text, escape: UInt8(ascii: "="), allowsNUL: false)
    }

    private static func stamp(_ date: Date) -> String {
        let text = TrashInfo.format(date, timeZone: TimeZone(secondsFromGMT: 0)!)
        return text.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "") + "Z"
    }

    /// `YYYYMMDDTHHMMSSZ` (ASCII digits only) as a date; `nil` for anything else.
    private static func parseStamp(_ text: Substring) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") else { return nil }
        for (index, byte) in bytes.enumerated() where index != 8 && index != 15 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        }
        func part(_ from: Int, _ length: Int) -> String { String(decoding: bytes[from..<(from + length)], as: UTF8.self) }
        let iso = "\(part(0, 4))-\(part(4, 2))-\(part(6, 2))T\(part(9, 2)):\(part(11, 2)):\(part(13, 2))Z"
        return TrashInfo.parseDate(iso, timeZone: TimeZone(secondsFromGMT: 0)!)
    }

    // MARK: TrashVolume

    /// Makes `files/` and `info/`: only after a write into them failed, so a trash in use costs no
    /// request for them.
    private func makeFolders() async throws {
        try await provider.createFolder(path: files, withIntermediateDirectories: true)
        try await provider.createFolder(path: infos, withIntermediateDirectories: true)
    }

    public func reserve(_ info: TrashInfo, base: String, attempt: Int) async throws -> String? {
        let random = Trash.randomSuffix()
        let name = Self.recordName(for: info, random: random)
        if name.utf8.count <= 255 { return name }
        // Too long to be its own record: a random name (never taken; no check, a request saved)
        // and a FreeDesktop record beside it.
        let plain = "\(base).\(random)"
        var options = WriteOptions(overwrite: true, atomically: false)
        options.returnsStoredAttributes = false
        let path = "\(infos)/\(plain).trashinfo"
        let data = info.encoded()
        do {
            _ = try await provider.write(path: path, from: ByteStream(data: data), options: options)
        } catch where [.notFound, .conflict].contains(error.failureKind) {
            try await makeFolders()
            _ = try await provider.write(path: path, from: ByteStream(data: data), options: options)
        }
        return plain
    }

    public func info(of name: String) async throws -> TrashInfo {
        if let record = Self.record(inName: name) { return record }
        let data = try await provider.readStream(path: "\(infos)/\(name).trashinfo", options: ReadOptions()).collect(limit: TrashInfo.maximumSize)
        return try TrashInfo.parse(data, name: name)
    }

    public func removeInfo(of name: String) async throws {
        guard Self.record(inName: name) == nil else { return }
        do {
            try await provider.removeItem(path: "\(infos)/\(name).trashinfo", recursive: false)
        } catch where error.failureKind == .notFound {}
    }

    public func entries() -> PullSequence<TrashEntry> {
        Self.entries(listing: files, of: provider) { TrashEntry(name: $0.name, attributes: $0) }
    }

    /// The entries of a trash whose records are the items of the folder `folder` on `provider`,
    /// each made by `entry` from its item (`nil`: not a record, skipped). A folder not made yet is
    /// an empty trash.
    public static func entries(listing folder: String, of provider: any FileProviderBasic,
                               _ entry: @escaping @Sendable (FileObject) -> TrashEntry?) -> PullSequence<TrashEntry> {
        let listing = provider.contentsOfDirectory(path: folder)
        return PullSequence {
            var entries: DirectoryListing.Entries.AsyncIterator? = listing.entries.makeAsyncIterator()
            return {
                while var iterator = entries {
                    let item: FileObject?
                    do {
                        item = try await iterator.next()
                    } catch where error.failureKind == .notFound {
                        item = nil  // no trash yet
                    }
                    entries = item == nil ? nil : iterator
                    if let item, let made = entry(item) { return made }
                }
                return nil
            }
        }
    }

    public func moveIn(_ path: String, as name: String) async throws -> String {
        do {
            try await provider.moveItem(path: path, to: "\(files)/\(name)", overwrite: false)
            return name
        } catch where error.failureKind != .cancelled {
            // A rename into a missing folder: 409 (RFC 4918), or 500 (Apache: "Could not rename
            // resource", ENOENT), or 403 (rclone), or FTP 550. Whatever it was, without `files/`
            // the folders are made and the rename tried once more.
            guard try await provider.itemIfPresent(path: files) == nil, try await provider.itemIfPresent(path: path) != nil else { throw error }
            try await makeFolders()
            try await provider.moveItem(path: path, to: "\(files)/\(name)", overwrite: false)
            return name
        }
    }

    public func moveOut(_ name: String, to path: String) async throws {
        try await provider.moveItem(path: "\(files)/\(name)", to: path, overwrite: false)
    }

    public func attributes(of name: String) async throws -> FileObject? {
        try await provider.itemIfPresent(path: "\(files)/\(name)")
    }

    public func removeContent(of name: String) async throws {
        do {
            try await provider.removeItem(path: "\(files)/\(name)", recursive: true)
        } catch where error.failureKind == .notFound {}
    }

    public func recordedPath(for path: String) -> String { path }

    public func providerPath(forRecorded recorded: String) -> String? {
        guard recorded.hasPrefix("/"), let path = try? RemotePath.normalize(recorded) else { return nil }
        return path
    }
}
