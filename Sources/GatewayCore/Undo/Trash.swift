public import Foundation

/// A remote's trash: moving items in (a rename), listing, restoring and emptying, written once for
/// every backend over the hooks of ``TrashVolume``.
///
/// Trashing writes the `.trashinfo` record first and then renames the item into `files/`, so an
/// interruption leaves at worst a record without an item (listed as gone), never an item nobody can
/// trace. Restoring renames it back and then removes the record.
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
        let data = info.encoded()
        let base = Self.baseName(RemotePath.lastComponent(of: path))
        var name = ""
        for attempt in 1...Self.nameAttempts {
            name = Self.candidate(base, attempt: attempt, exclusive: volume.reservesNamesExclusively)
            if try await volume.reserve(name, info: data) { break }
            if attempt == Self.nameAttempts {
                throw CocoaError.described(.fileWriteFileExists, path: path, reason: "no free name in the trash for \(base)")
            }
        }
        do {
            try await volume.moveIn(path, as: name)
        } catch {
            try? await volume.removeInfo(of: name)
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
            var current: (volume: any TrashVolume, names: PullSequence<String>.AsyncIterator)?
            return {
                while true {
                    if current == nil {
                        if volumes == nil { volumes = try await locator.volumes(under: folder).reversed() }
                        guard let volume = volumes?.popLast() else { return nil }
                        current = (volume, volume.names().makeAsyncIterator())
                    }
                    guard let name = try await current!.names.next() else {
                        current = nil
                        continue
                    }
                    if let item = try await Self.describe(name, in: current!.volume), Self.lies(item.originalPath, in: folder) { return item }
                }
            }
        }
    }

    /// The item `name` in the trash `volume` (as listed), or `nil`.
    public func item(named name: String, volume identifier: String) async throws -> TrashedItem? {
        guard let volume = try await locator.volume(identifier: identifier) else { return nil }
        return try await Self.describe(name, in: volume)
    }

    /// Moves a trashed item back to `path` (its original path by default). Fails, changing nothing,
    /// when something is there; the folder it goes into must exist.
    public func restore(_ item: TrashedItem, to path: String? = nil) async throws {
        guard let target = path ?? item.originalPath else {
            throw FileProviderError.invalidPath(path: item.recordedPath, reason: "the trash does not say where \(item.name) came from")
        }
        let volume = try await volume(of: item)
        try await volume.moveOut(item.name, to: try RemotePath.normalize(target))
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

    private static func describe(_ name: String, in volume: any TrashVolume) async throws -> TrashedItem? {
        let info: TrashInfo
        do {
            info = try TrashInfo.parse(try await volume.info(of: name), name: name)
        } catch where error.failureKind == .notFound {
            return nil
        } catch where error.failureKind == .malformedResponse || (error as? CocoaError)?.code == .fileReadTooLarge {
            return TrashedItem(name: name, volume: volume.identifier, originalPath: nil, recordedPath: "", deletionDate: nil)
        }
        guard let original = volume.providerPath(forRecorded: info.path) else { return nil }
        let attributes = try? await volume.attributes(of: name)
        return TrashedItem(name: name, volume: volume.identifier, originalPath: original, recordedPath: info.path,
                           deletionDate: info.deletionDate, type: attributes?.type, size: attributes?.size)
    }

    /// Names tried for one item before giving up.
    static let nameAttempts = 50

    /// The item's name, cut to leave room for a suffix and `.trashinfo` within 255 bytes.
    static func baseName(_ name: String) -> String {
        var base = name.isEmpty ? "item" : name
        while base.utf8.count > 200 { base.removeLast() }
        return base
    }

    /// `NAME`, `NAME.2`, … where names are reserved exclusively; `NAME.RANDOM` elsewhere.
    static func candidate(_ base: String, attempt: Int, exclusive: Bool) -> String {
        if exclusive {
            return attempt == 1 ? base : attempt < 20 ? "\(base).\(attempt)" : "\(base).\(Self.randomSuffix())"
        }
        return "\(base).\(Self.randomSuffix())"
    }

    private static func randomSuffix() -> String {
        String(UInt64.random(in: 0...UInt64.max) >> 16, radix: 36)
    }
}

/// The trash of a network remote: a folder on the remote (`trash_dir`, by default
/// `/.gateway-trash`) with `files/` and `info/`, driven through the provider's own operations.
/// Trashing is the provider's server-side rename (WebDAV `MOVE`, FTP `RNFR`/`RNTO`).
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
    public var reservesNamesExclusively: Bool { false }

    private var files: String { folder + "/files" }
    private var infos: String { folder + "/info" }

    public func volume(for path: String) async throws -> any TrashVolume { self }

    public func volumes(under path: String) async throws -> [any TrashVolume] { [self] }

    public func volume(identifier: String) async throws -> (any TrashVolume)? { identifier == folder ? self : nil }

    public func isTrashFolder(_ path: String) -> Bool { path == folder }

    /// Makes `files/` and `info/`: only after a write into them failed, so a trash in use costs no
    /// request for it.
    private func makeFolders() async throws {
        try await provider.createFolder(path: files, withIntermediateDirectories: true)
        try await provider.createFolder(path: infos, withIntermediateDirectories: true)
    }

    public func reserve(_ name: String, info: Data) async throws -> Bool {
        // A random name: one plain write, no existence check (a second request on most servers).
        var options = WriteOptions(overwrite: true, atomically: false, expectedSize: Int64(info.count))
        options.returnsStoredAttributes = false
        let path = "\(infos)/\(name).trashinfo"
        do {
            _ = try await provider.write(path: path, from: ByteStream(data: info), options: options)
        } catch where [.notFound, .conflict].contains(error.failureKind) {
            try await makeFolders()
            _ = try await provider.write(path: path, from: ByteStream(data: info), options: options)
        }
        return true
    }

    public func info(of name: String) async throws -> Data {
        try await provider.readStream(path: "\(infos)/\(name).trashinfo", options: ReadOptions()).collect(limit: TrashInfo.maximumSize)
    }

    public func removeInfo(of name: String) async throws {
        do {
            try await provider.removeItem(path: "\(infos)/\(name).trashinfo", recursive: false)
        } catch where error.failureKind == .notFound {}
    }

    public func names() -> PullSequence<String> {
        let listing = provider.contentsOfDirectory(path: infos)
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
                    entries = iterator
                    guard let item else {
                        entries = nil
                        return nil
                    }
                    if item.type == .file, item.name.hasSuffix(".trashinfo"), item.name.count > ".trashinfo".count {
                        return String(item.name.dropLast(".trashinfo".count))
                    }
                }
                return nil
            }
        }
    }

    public func moveIn(_ path: String, as name: String) async throws {
        do {
            try await provider.moveItem(path: path, to: "\(files)/\(name)", overwrite: false)
        } catch where [.notFound, .conflict].contains(error.failureKind) {
            // The item is there, so `files/` is not.
            guard try await provider.itemIfPresent(path: path) != nil, try await provider.itemIfPresent(path: files) == nil else { throw error }
            try await makeFolders()
            try await provider.moveItem(path: path, to: "\(files)/\(name)", overwrite: false)
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
