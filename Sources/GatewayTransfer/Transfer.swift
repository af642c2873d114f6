import Foundation
public import GatewayCore

/// One side of a transfer: a provider and a path on it.
public struct TransferEndpoint: Sendable {
    /// The provider.
    public var provider: any FileProviderBasic
    /// The path on it.
    public var path: String
    /// How to name it in messages (`remote:path`).
    public var displayName: String

    /// Creates an endpoint.
    public init(provider: any FileProviderBasic, path: String, displayName: String? = nil) {
        self.provider = provider
        self.path = path
        self.displayName = displayName ?? "\(provider.name):\(path)"
    }

    /// The endpoint one level down.
    public func appending(_ relative: String) throws -> TransferEndpoint {
        let joined = try RemotePath.join(path, relative)
        let separator = displayName.hasSuffix("/") || displayName.hasSuffix(":") ? "" : "/"
        return TransferEndpoint(provider: provider, path: joined, displayName: displayName + separator + relative)
    }

    /// Whether both endpoints are on the same provider instance.
    func isSameProvider(as other: TransferEndpoint) -> Bool {
        guard type(of: provider) == type(of: other.provider) else { return false }
        return (provider as AnyObject) === (other.provider as AnyObject)
    }
}

/// Options for copies and moves.
public struct TransferOptions: Sendable {
    /// Replace existing files at the destination.
    public var overwrite: Bool
    /// Give copies the source's modification time where the destination can set it.
    public var preserveModificationTimes: Bool
    /// Ranged streams a large file moves in at once, where the source reads ranges and the
    /// destination writes pieces (Local) or takes ranged uploads (WebDAV); 1 streams it in one piece.
    public var multiThreadStreams: Int = 1
    /// Files smaller than this are never split into several streams.
    public var multiThreadCutoff: Int64 = 256 << 20
    /// Content hashes the source file is known to have (from its listing, or compared by
    /// `--checksum`). A streamed copy hashes the bytes as they pass and fails with
    /// ``FileProviderError/checksumMismatch(path:algorithm:expected:actual:)``, storing nothing, when
    /// they differ; the destination is also told the hashes (``WriteOptions/contentHashes``).
    public var sourceHashes: [HashAlgorithm: String]
    /// Called right before the copy replaces the destination file (``WriteOptions/beforeReplacing``;
    /// before a server-side copy or move over it): the copy engine moves the old file to the trash here.
    public var beforeReplacing: (@Sendable (String) async throws -> Void)?
    /// Removes a moved file's source once its copy is complete; by default `removeItem`. The copy
    /// engine sends it to the source's trash here.
    public var removeSource: (@Sendable (String) async throws -> Void)?

    /// Creates options; by default existing files are replaced and times preserved.
    public init(overwrite: Bool = true, preserveModificationTimes: Bool = true, sourceHashes: [HashAlgorithm: String] = [:]) {
        self.overwrite = overwrite
        self.preserveModificationTimes = preserveModificationTimes
        self.sourceHashes = sourceHashes
    }
}

/// Moves single files between any two providers: server-side when both ends are the same remote and
/// it can, otherwise by streaming the source's read stream into the destination's atomic write, so no
/// temporary local file and no whole file in memory. ``CopyEngine`` runs it over whole trees.
public enum Transfer {
    /// Copies one file to exactly `destination.path`.
    public static func copyFile(from source: TransferEndpoint, to destination: TransferEndpoint,
                                options: TransferOptions = TransferOptions(), progress: TransferProgress? = nil,
                                sourceAttributes: FileObject? = nil) async throws {
        if source.isSameProvider(as: destination), sourceAttributes?.isSymbolicLink != true,
           source.provider.capabilities.supports(.serverSideCopy),
           let operations = source.provider as? any FileProviderOperations {
            guard let beforeReplacing = options.beforeReplacing else {
                try await operations.copyItem(path: source.path, to: destination.path, overwrite: options.overwrite, progress: progress)
                return
            }
            // The old file goes to the trash only once the copy is complete: copied server-side
            // under a temporary name, then renamed into place.
            let temporary = RemotePath.temporaryPath(for: destination.path)
            do {
                try await operations.copyItem(path: source.path, to: temporary, overwrite: false, progress: progress)
                try await beforeReplacing(destination.path)
                try await operations.moveItem(path: temporary, to: destination.path, overwrite: options.overwrite)
            } catch {
                try? await operations.removeItem(path: temporary, recursive: false)
                throw error
            }
            return
        }
        guard let reader = source.provider as? any FileProviderReadWrite else {
            throw FileProviderError.unsupported(operation: "reading files", path: source.path)
        }
        guard let writer = destination.provider as? any FileProviderReadWrite else {
            throw FileProviderError.unsupported(operation: "writing files", path: destination.path)
        }
        let attributes: FileObject
        if let sourceAttributes {
            attributes = sourceAttributes
        } else {
            attributes = try await source.provider.attributesOfItem(path: source.path)
        }
        let hashes = options.sourceHashes.merging(attributes.hashes) { known, _ in known }
        // A fraction is known from the start (unless the caller set its own total).
        if let progress, progress.snapshot.totalBytes == nil, let size = attributes.size { progress.setTotalBytes(size) }
        var write = WriteOptions(overwrite: options.overwrite, atomically: true, progress: progress)
        write.returnsStoredAttributes = false
        write.beforeReplacing = options.beforeReplacing
        // Also where the destination cannot set times: plain WebDAV records it in a source stamp.
        if options.preserveModificationTimes {
            write.modificationDate = attributes.modificationDate
        }
        if options.multiThreadStreams > 1, let size = attributes.size, size >= max(options.multiThreadCutoff, 2),
           hashes.isEmpty, source.provider.capabilities.supports(.rangedRead),
           let positional = destination.provider as? any FileProviderPositionalWrite {
            try await multiStreamCopy(from: source, reader: reader, attributes: attributes, size: size, to: destination,
                                      writer: positional, streams: options.multiThreadStreams, options: write, progress: progress)
            return
        }
        if options.multiThreadStreams > 1, let size = attributes.size, size >= max(options.multiThreadCutoff, 2),
           byteRanges(size: size, streams: options.multiThreadStreams).count > 1,
           hashes.isEmpty, source.provider.capabilities.supports(.rangedRead),
           let segmented = destination.provider as? any FileProviderSegmentedWrite,
           let file = try await segmented.openSegmentedWrite(path: destination.path, size: size, options: write) {
            try await segmentedCopy(from: source, reader: reader, attributes: attributes, size: size, to: file,
                                    streams: options.multiThreadStreams)
            return
        }
        if let resumable = destination.provider as? any FileProviderResumableWrite,
           let key = resumeKey(source: source, attributes: attributes, hashes: hashes) {
            try await resumingCopy(from: source, reader: reader, attributes: attributes, to: destination, writer: resumable,
                                   key: key, options: write, progress: progress)
            return
        }
        var stream = try await verifiedRead(from: source, reader: reader, attributes: attributes, hashes: hashes, options: options)
        write.expectedSize = stream.expectedLength
        if let algorithm = HashAlgorithm.preference.first(where: { hashes[$0] != nil }), let expected = hashes[algorithm] {
            stream = stream.verifying(algorithm, expected: expected, path: source.path)
            write.contentHashes = hashes
        }
        _ = try await writer.write(path: destination.path, from: stream, options: write)
    }

    /// The one in-order read of a file whose hash is checked as it streams. A large one is read as
    /// two ranged reads pinned to its version: its first MiB, then the rest. Servers that check a
    /// read from byte 0 to the end against their own hash of the file (`rclone serve s3`, whose
    /// VFS hashes any read that starts at 0 and never seeks: 1.8 s of its CPU per GiB, as much as
    /// the copy's own) are spared that work, which the copy does anyway, for one request more.
    private static func verifiedRead(from source: TransferEndpoint, reader: any FileProviderReadWrite, attributes: FileObject,
                                     hashes: [HashAlgorithm: String], options: TransferOptions) async throws -> ByteStream {
        let head = splitReadHead
        guard !hashes.isEmpty, let size = attributes.size, size >= max(options.multiThreadCutoff, 2 * head),
              let version = attributes.versionTag, source.provider.capabilities.supports(.rangedRead) else {
            return try await reader.readStream(path: source.path, options: ReadOptions())
        }
        let first = try await reader.readStream(path: source.path, options: ReadOptions(offset: 0, length: head, ifVersion: version))
        return ByteStream.concatenating(2, expectedLength: size) { index in
            index == 0 ? first.exactly(head, path: source.path, what: "the file's first part")
                : try await reader.readStream(path: source.path, options: ReadOptions(offset: head, ifVersion: version))
                    .exactly(size - head, path: source.path)
        }
    }

    /// The first part of a split verified read (``verifiedRead(from:reader:attributes:hashes:options:)``).
    static let splitReadHead: Int64 = 1 << 20

    /// Downloads `size` bytes in `streams` ranged reads at once, each written at its offset; the
    /// file appears under its name only when every range arrived. Ranges are version-checked, so a
    /// source that changes meanwhile fails the copy instead of mixing two versions.
    private static func multiStreamCopy(from source: TransferEndpoint, reader: any FileProviderReadWrite, attributes: FileObject,
                                        size: Int64, to destination: TransferEndpoint, writer: any FileProviderPositionalWrite,
                                        streams: Int, options: WriteOptions, progress: TransferProgress?) async throws {
        let file = try await writer.openPositionalWrite(path: destination.path, size: size, options: options)
        let ranges = byteRanges(size: size, streams: streams)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (start, length) in ranges {
                    group.addTask {
                        let range = rangeRead(start, length, of: attributes, among: ranges.count)
                        var position = start
                        for try await chunk in RangeReader(reader: reader, path: source.path, options: range).stream {
                            try progress.checkCancellation()
                            try file.write(chunk, at: position)
                            position += Int64(chunk.count)
                            progress?.addBytes(Int64(chunk.count))
                        }
                    }
                }
                try await group.waitForAll()
            }
            _ = try await file.commit()
        } catch {
            file.abort()
            throw error
        }
    }

    /// `size` bytes cut into at most `streams` ranges of whole MiBs, at least one MiB each.
    static func byteRanges(size: Int64, streams: Int) -> [(start: Int64, length: Int64)] {
        let unit: Int64 = 1 << 20
        let part = max(unit, (size / Int64(streams) + unit - 1) / unit * unit)
        return stride(from: Int64(0), to: size, by: Int(part)).map { start in (start, min(part, size - start)) }
    }

    /// A version-checked read of one of `count` ranges of a file, which share one transfer's memory.
    static func rangeRead(_ start: Int64, _ length: Int64, of attributes: FileObject, among count: Int, chunkSize: Int = 1 << 20) -> ReadOptions {
        var range = ReadOptions(offset: start, length: length, ifVersion: attributes.versionTag, chunkSize: chunkSize)
        range.bufferSize = max(512 << 10, range.bufferSize / count)
        return range
    }

    /// Uploads `size` bytes as `streams` ranged reads at once, each sent as its own range of the
    /// destination file, which takes its name only when the server holds every byte. Ranges are
    /// version-checked, so a source that changes meanwhile fails the copy instead of mixing versions.
    private static func segmentedCopy(from source: TransferEndpoint, reader: any FileProviderReadWrite, attributes: FileObject,
                                      size: Int64, to file: any SegmentedFileWriter, streams: Int) async throws {
        let ranges = byteRanges(size: size, streams: streams)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (start, length) in ranges {
                    group.addTask {
                        // Opened when the destination first asks for bytes, i.e. once it has a
                        // connection: a range waiting for one holds no idle source stream meanwhile.
                        let range = rangeRead(start, length, of: attributes, among: ranges.count, chunkSize: 256 << 10)
                        try await file.write(offset: start, length: length, from: RangeReader(reader: reader, path: source.path, options: range).stream)
                    }
                }
                try await group.waitForAll()
            }
            _ = try await file.commit()
        } catch {
            await file.abort()
            throw error
        }
    }

    /// Files at least this large are copied resumably where the destination can keep a partial file.
    public static let resumeThreshold: Int64 = 1 << 20

    /// The key that names a resumable copy of this version of the source file, or `nil` when the
    /// copy cannot resume: a small file, a source without ranged reads or version tags, or a hash
    /// to verify (which needs every byte to stream past).
    static func resumeKey(source: TransferEndpoint, attributes: FileObject, hashes: [HashAlgorithm: String]) -> String? {
        guard hashes.isEmpty, let version = attributes.versionTag, let size = attributes.size, size >= resumeThreshold,
              source.provider.capabilities.supports(.rangedRead) else { return nil }
        // A weak HTTP entity tag (Apache's for a file changed within the last second) and its later
        // strong form name the same version, as the providers' version checks treat them.
        let stable = version.hasPrefix("W/") ? String(version.dropFirst(2)) : version
        let identity = "\(source.provider.name)\u{0}\(source.path)\u{0}\(stable)\u{0}\(size)"
        return String(ContentHasher.hash(Data(identity.utf8), .sha256).prefix(16))
    }

    /// Continues an interrupted copy of the same source version from where its bytes end (a ranged,
    /// version-checked read), or starts one that can be continued.
    private static func resumingCopy(from source: TransferEndpoint, reader: any FileProviderReadWrite, attributes: FileObject,
                                     to destination: TransferEndpoint, writer: any FileProviderResumableWrite, key: String,
                                     options: WriteOptions, progress: TransferProgress?) async throws {
        let size = attributes.size ?? 0
        var offset = try await writer.resumableWriteLength(path: destination.path, key: key)
        if offset >= size { offset = 0 }
        var stream: ByteStream
        do {
            stream = try await reader.readStream(path: source.path, options: ReadOptions(offset: offset, ifVersion: attributes.versionTag))
        } catch where error.failureKind == .versionMismatch {
            // The source changed since it was listed: what was kept is of the old version.
            offset = 0
            stream = try await reader.readStream(path: source.path, options: ReadOptions())
        }
        var write = options
        write.expectedSize = offset.saturatingAdding(stream.expectedLength ?? (size - offset))
        if offset > 0 { progress?.addBytes(offset) }
        _ = try await writer.resumableWrite(path: destination.path, key: key, offset: offset, from: stream, options: write)
    }

    /// Refuses to copy a folder into itself, which would never end. Compares the endpoints' URLs, so
    /// two remotes that reach the same place (a named remote and a bare path) are caught too.
    static func refuseNesting(source: TransferEndpoint, destination: TransferEndpoint) throws {
        guard let from = try? source.provider.url(of: source.path).standardizedFileURL,
              let to = try? destination.provider.url(of: destination.path).standardizedFileURL,
              from.scheme == to.scheme, from.host == to.host, from.port == to.port else { return }
        let fromPath = from.path.hasSuffix("/") ? String(from.path.dropLast()) : from.path
        if to.path == fromPath || to.path.hasPrefix(fromPath + "/") || fromPath.isEmpty {
            throw FileProviderError.invalidPath(path: destination.path, reason: "the destination is inside the source folder")
        }
    }

    /// Moves a file: renamed server-side when both ends are the same remote, else copied and the
    /// source removed only after the copy completed.
    public static func moveFile(from source: TransferEndpoint, to destination: TransferEndpoint,
                                options: TransferOptions = TransferOptions(), progress: TransferProgress? = nil,
                                sourceAttributes: FileObject? = nil) async throws {
        if source.isSameProvider(as: destination),
           source.provider.capabilities.supports(.serverSideMove),
           let operations = source.provider as? any FileProviderOperations {
            try await options.beforeReplacing?(destination.path)
            try await operations.moveItem(path: source.path, to: destination.path, overwrite: options.overwrite)
            return
        }
        guard let remover = source.provider as? any FileProviderOperations else {
            throw FileProviderError.unsupported(operation: "removing files", path: source.path)
        }
        try await copyFile(from: source, to: destination, options: options, progress: progress, sourceAttributes: sourceAttributes)
        if let removeSource = options.removeSource {
            try await removeSource(source.path)
        } else {
            try await remover.removeItem(path: source.path, recursive: false)
        }
    }
}

/// A ranged read opened on the first request for bytes, and checked to deliver exactly its length
/// (``ByteStream/exactly(_:path:what:)``). Pulled by one consumer at a time.
private final class RangeReader: @unchecked Sendable {
    private let reader: any FileProviderReadWrite
    private let path: String
    private let options: ReadOptions
    private var iterator: ByteStream.AsyncIterator?

    init(reader: any FileProviderReadWrite, path: String, options: ReadOptions) {
        self.reader = reader
        self.path = path
        self.options = options
    }

    var stream: ByteStream {
        let opened = ByteStream(expectedLength: options.length) { try await self.next() }
        guard let length = options.length else { return opened }
        return opened.exactly(length, path: path, what: "a range")
    }

    private func next() async throws -> Data? {
        if iterator == nil { iterator = try await reader.readStream(path: path, options: options).makeAsyncIterator() }
        return try await iterator?.next()
    }
}
