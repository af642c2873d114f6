import Foundation
import GatewayCore
import GatewayS3Protocol
import Synchronization

/// Where an S3 remote's removals and overwrites go: on a bucket that keeps versions, nowhere (the
/// older versions are the trash, ``S3VersionTrashVolume``); otherwise the shared trash prefix
/// (``ProviderTrashVolume``: a server-side copy and delete). Both are listed, so records made
/// while versioning was on stay restorable after it is suspended.
final class S3TrashLocator: TrashLocator {
    let provider: S3Provider
    let plain: ProviderTrashVolume
    let versions: S3VersionTrashVolume

    init(provider: S3Provider, folder: String) {
        self.provider = provider
        self.plain = ProviderTrashVolume(provider: provider, folder: folder)
        self.versions = S3VersionTrashVolume(provider: provider, folder: folder)
    }

    func volume(for path: String) async throws -> any TrashVolume {
        try await provider.bucketKeepsVersions() ? versions : plain
    }

    func volumes(under path: String) async throws -> [any TrashVolume] { [plain, versions] }

    func volume(identifier: String) async throws -> (any TrashVolume)? {
        identifier == plain.identifier ? plain : identifier == versions.identifier ? versions : nil
    }

    func isTrashFolder(_ path: String) -> Bool { path == plain.folder }
}

/// The trash of a bucket that keeps versions: removing an item deletes its objects (S3 keeps each
/// one as an older version behind a delete marker) after writing a record of which versions they
/// were (``S3VersionManifest``) under `TRASH/versions/NAME`; no byte is copied. Restoring copies
/// those versions back on the server (`CopyObject` with `versionId`), so they are current again;
/// emptying removes them, and their record, for good.
///
/// Record names are those of ``ProviderTrashVolume`` (the original path and the removal time,
/// escaped) with the kind and size after the random part (`.f1234`, `.d`), so that listing the
/// trash is one folder listing.
final class S3VersionTrashVolume: TrashVolume {
    let provider: S3Provider
    /// The trash folder (`trash_dir`); the records are in its `versions/`.
    let folder: String

    init(provider: S3Provider, folder: String) {
        self.provider = provider
        self.folder = folder
    }

    /// The records of names reserved and not yet moved in (the deletion time a caller chose
    /// goes into the manifest of an item whose name is too long to hold it).
    private let reserved = Mutex<[String: TrashInfo]>([:])

    var identifier: String { records }
    var folderPath: String? { folder }
    private var records: String { folder + "/versions" }

    private func recordPath(_ name: String) -> String { records + "/" + name }

    // MARK: Names

    func reserve(_ info: TrashInfo, base: String, attempt: Int) async throws -> String? {
        let random = Trash.randomSuffix()
        var name = ProviderTrashVolume.recordName(for: info, random: random)
        // (The kind and size are added by `moveIn`; a name too long is plain, its record in the manifest.)
        if name.utf8.count > 230 { name = "\(base).\(random)" }
        reserved.withLock { $0[name] = info }
        return name
    }

    /// The kind and size a record's name ends with (`.f1234`, `.d`).
    static func attributes(inName name: String) -> (kind: S3VersionManifest.Kind, size: Int64?)? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        let tail = name[name.index(after: dot)...]
        if tail == "d" { return (.folder, nil) }
        guard tail.first == "f", let size = Int64(tail.dropFirst()), size >= 0 else { return nil }
        return (.file, size)
    }

    func info(of name: String) async throws -> TrashInfo {
        if let record = ProviderTrashVolume.record(inName: name) { return record }
        let header = try await manifestHeader(name)
        return TrashInfo(path: header.path, deletionDate: header.deletionDate)
    }

    func removeInfo(of name: String) async throws {
        // The record goes with all its versions: nothing of it stays in the bucket.
        reserved.withLock { _ = $0.removeValue(forKey: name) }
        let path = recordPath(name)
        guard let found = try await provider.headVersion(path) else { return }
        try await provider.deleteVersion(provider.key(path), version: found.version, path: path)
    }

    func entries() -> PullSequence<TrashEntry> {
        ProviderTrashVolume.entries(listing: records, of: provider) { item in
            guard !item.isDirectory, let attributes = Self.attributes(inName: item.name) else { return nil }
            return TrashEntry(name: item.name, attributes: Self.item(named: item.name, attributes))
        }
    }

    private static func item(named name: String, _ attributes: (kind: S3VersionManifest.Kind, size: Int64?)) -> FileObject {
        FileObject(path: "/" + name, type: attributes.kind == .folder ? .directory : .file, size: attributes.size)
    }

    func attributes(of name: String) async throws -> FileObject? {
        guard let attributes = Self.attributes(inName: name), try await provider.headObject(recordPath(name)) != nil else { return nil }
        return Self.item(named: name, attributes)
    }

    // MARK: Moving in and out

    /// Writes the record of the versions the item at `path` is made of, then deletes the item (a
    /// delete marker over each object). Nothing is copied.
    func moveIn(_ path: String, as reservedName: String) async throws -> String {
        let removed = reserved.withLock { $0.removeValue(forKey: reservedName) }?.deletionDate ?? Date()
        if let found = try await provider.headVersion(path) {
            let (size, version) = (found.item.size ?? 0, found.version)
            let name = reservedName + ".f\(size)"
            let header = S3VersionManifest.Header(kind: .file, path: path, deletionDate: removed)
            let text = S3VersionManifest.line(header) + S3VersionManifest.line(.init(version: version, size: size, relativeKey: ""))
            try await writeRecord(name, ByteStream(data: Data(text.utf8)))
            try await removeItem(path, record: name)
            return name
        }
        let name = reservedName + ".d"
        let prefix = provider.folderPrefix(path)
        let header = S3VersionManifest.Header(kind: .folder, path: path, deletionDate: removed)
        let counted = EntryCount()
        let pages = provider.versionPages(below: prefix, path: path)
        // The manifest is streamed from the listing: one page of versions in memory at a time.
        let lines = PullSequence<Data> {
            var iterator: PullSequence<[S3VersionsPage.Version]>.AsyncIterator?
            return {
                guard var pending = iterator else {
                    iterator = pages.makeAsyncIterator()
                    return Data(S3VersionManifest.line(header).utf8)
                }
                while let page = try await pending.next() {
                    iterator = pending
                    var text = ""
                    for version in page where version.isLatest && !version.isDeleteMarker {
                        guard let relative = S3Provider.remainder(of: version.key, after: prefix) else { continue }
                        text += S3VersionManifest.line(.init(version: version.versionID, size: version.size, relativeKey: relative))
                        counted.value.add(1, ordering: .relaxed)
                    }
                    if !text.isEmpty { return Data(text.utf8) }
                }
                iterator = pending
                return nil
            }
        }
        try await writeRecord(name, ByteStream(lines))
        guard counted.value.load(ordering: .relaxed) > 0 else {
            try? await removeInfo(of: name)
            throw provider.notFound(path)
        }
        try await removeItem(path, record: name)
        return name
    }

    /// Deletes the trashed item; its record goes too when that fails.
    private func removeItem(_ path: String, record name: String) async throws {
        do {
            try await provider.removeItem(path: path, recursive: true)
        } catch {
            try? await removeInfo(of: name)
            throw error
        }
    }

    private func writeRecord(_ name: String, _ stream: ByteStream) async throws {
        var options = WriteOptions(overwrite: true, atomically: false)
        options.returnsStoredAttributes = false
        _ = try await provider.write(path: recordPath(name), from: stream, options: options)
    }

    /// Copies the versions of the record `name` back, below `path`; fails, changing nothing, when
    /// something is at `path`.
    func moveOut(_ name: String, to path: String) async throws {
        if try await provider.itemIfPresent(path: path) != nil { throw provider.existsError(path) }
        let source = try await info(of: name).path
        try await forEachEntry(of: name) { header, entry in
            let provider = self.provider
            let (from, to) = header.kind == .file
                ? (provider.key(source), provider.key(path))
                : (provider.folderPrefix(source) + entry.relativeKey, provider.folderPrefix(path) + entry.relativeKey)
            try await provider.copyVersion(from, version: entry.version, size: entry.size, to: to, path: path)
        }
    }

    func removeContent(of name: String) async throws {
        let source: String
        do {
            source = try await info(of: name).path
        } catch where error.failureKind == .notFound {
            return
        }
        let header = try await forEachEntry(of: name) { header, entry in
            let provider = self.provider
            let objectKey = header.kind == .file ? provider.key(source) : provider.folderPrefix(source) + entry.relativeKey
            try await provider.deleteVersion(objectKey, version: entry.version, path: source)
        }
        // The delete markers trashing left in front of those versions: where nothing else of a
        // key is left, they go too (where older versions are, they stay, hiding them).
        let file = header.kind == .file
        try await provider.removeLoneDeleteMarkers(below: file ? provider.key(source) : provider.folderPrefix(source), exactKey: file, path: source)
    }

    func recordedPath(for path: String) -> String { path }

    func providerPath(forRecorded recorded: String) -> String? {
        guard recorded.hasPrefix("/"), let path = try? RemotePath.normalize(recorded) else { return nil }
        return path
    }

    // MARK: Reading records

    /// The first line of the record `name`.
    private func manifestHeader(_ name: String) async throws -> S3VersionManifest.Header {
        let path = recordPath(name)
        var reader = S3VersionManifest.LineReader()
        for try await chunk in try await provider.readStream(path: path, options: ReadOptions()) {
            if let first = try Self.parse(path, { try reader.lines(in: chunk) }).first {
                return try Self.parse(path) { try S3VersionManifest.header(first) }
            }
        }
        throw FileProviderError.malformedResponse(path: path, detail: "the trash record is empty")
    }

    /// Runs `body` for each entry of the record `name`, up to 8 at once, reading the record as it
    /// goes; returns the record's header.
    @discardableResult
    private func forEachEntry(of name: String,
                              _ body: @escaping @Sendable (S3VersionManifest.Header, S3VersionManifest.Entry) async throws -> Void) async throws
        -> S3VersionManifest.Header {
        let path = recordPath(name)
        var reader = S3VersionManifest.LineReader()
        var header: S3VersionManifest.Header?
        try await withThrowingTaskGroup(of: Void.self) { group in
            var slots = TaskSlots(width: 8)
            for try await chunk in try await provider.readStream(path: path, options: ReadOptions()) {
                for line in try Self.parse(path, { try reader.lines(in: chunk) }) {
                    guard let known = header else {
                        header = try Self.parse(path) { try S3VersionManifest.header(line) }
                        continue
                    }
                    let entry = try Self.parse(path) { try S3VersionManifest.entry(line) }
                    try await slots.add({ try await body(known, entry) }, to: &group)
                }
            }
            try await group.waitForAll()
        }
        guard let header, !reader.isCutShort else {
            throw FileProviderError.malformedResponse(path: path, detail: "the trash record is cut short")
        }
        return header
    }

    private static func parse<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as S3VersionManifest.Failure {
            throw FileProviderError.malformedResponse(path: path, detail: "unreadable trash record: \(failure.description)")
        }
    }
}

/// How many entries a record being streamed holds so far.
private final class EntryCount: Sendable {
    let value = Atomic<Int>(0)
}
