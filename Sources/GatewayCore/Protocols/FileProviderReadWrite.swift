public import Foundation

/// How to read: which bytes, and of which version.
public struct ReadOptions: Sendable, Hashable {
    /// First byte to read.
    public var offset: Int64
    /// How many bytes to read at most; `nil` reads to the end.
    public var length: Int64?
    /// Fail with ``FileProviderError/versionMismatch(path:expected:actual:)`` unless the item still has
    /// this ``FileObject/versionTag`` (for resuming a read of an unchanged file).
    public var ifVersion: String?
    /// Preferred chunk size in bytes.
    public var chunkSize: Int
    /// How many bytes a network backend may hold in memory ahead of the reader (4 MiB by default);
    /// several parallel streams of one file use less each.
    public var bufferSize: Int = 4 << 20

    /// Creates read options; the defaults read the whole current file.
    public init(offset: Int64 = 0, length: Int64? = nil, ifVersion: String? = nil, chunkSize: Int = 1 << 20) {
        self.offset = offset
        self.length = length
        self.ifVersion = ifVersion
        self.chunkSize = chunkSize
    }

    /// The options a provider can compute with: a negative offset or length fails with
    /// ``FileProviderError/invalidPath(path:reason:)``, and a range that would end past `Int64.max`
    /// (`offset + length` overflowing) reads to the end instead, so no sum of the two can trap.
    public func checked(path: String) throws -> ReadOptions {
        guard offset >= 0, (length ?? 0) >= 0 else {
            throw FileProviderError.invalidPath(path: path, reason: "negative offset or length")
        }
        var checked = self
        if let length, length > Int64.max - offset { checked.length = nil }
        return checked
    }

    /// The index of the last byte of the range (`offset + length - 1`), or `nil` when it reads to
    /// the end or is empty. Call on ``checked(path:)`` options.
    public var lastByte: Int64? {
        guard let length, length > 0, length <= Int64.max - offset else { return nil }
        return offset + length - 1
    }
}

/// How to write.
public struct WriteOptions: Sendable {
    /// Replace an existing item. When `false`, an existing item makes the write fail and stays untouched.
    public var overwrite: Bool
    /// Write under a temporary name and rename into place when complete, so the final name only ever
    /// holds a complete file.
    public var atomically: Bool
    /// When set, the write fails (and leaves nothing behind) unless exactly this many bytes arrived.
    public var expectedSize: Int64?
    /// Modification time to give the new file, where the backend can set it.
    public var modificationDate: Date?
    /// Only replace the item if it still has this version tag (no lost updates).
    public var ifVersion: String?
    /// Updated with bytes written; cancelling it stops the write.
    public var progress: TransferProgress?
    /// Whether the returned ``FileObject`` must be the backend's own description of the stored file
    /// (version tag, dates). Network backends need an extra request for that; callers that ignore
    /// the result (the copy engine) turn it off, and get what is known locally instead.
    public var returnsStoredAttributes: Bool = true
    /// Content hashes of the bytes about to be written (lowercase hexadecimal), when the caller knows
    /// them before writing. Backends that store hashes record them (WebDAV with `vendor` `nextcloud`
    /// or `owncloud` sends an `OC-Checksum` header, which the server checks and keeps).
    public var contentHashes: [HashAlgorithm: String] = [:]
    /// Called by an atomic write once the new content is complete (under its temporary name, or
    /// all in memory for a server whose `PUT` is itself atomic), right before it is renamed over the
    /// target (whose path it is given); a failure stops the write and leaves the target as it was.
    /// Undoable writes move the previous file into the trash here
    /// (``FileProviderUndoable/writeUndoably(path:from:options:existing:useTrash:)``), and put it
    /// back when the write fails after all. Every atomic write of the built-in providers calls it;
    /// a write with it set is never done in place.
    public var beforeReplacing: (@Sendable (String) async throws -> Void)?

    /// Creates write options; by default writes replace existing items atomically.
    public init(overwrite: Bool = true, atomically: Bool = true, expectedSize: Int64? = nil,
                modificationDate: Date? = nil, ifVersion: String? = nil, progress: TransferProgress? = nil) {
        self.overwrite = overwrite
        self.atomically = atomically
        self.expectedSize = expectedSize
        self.modificationDate = modificationDate
        self.ifVersion = ifVersion
        self.progress = progress
    }
}

/// Reading and writing file contents: whole, ranged, and streamed, so that a file of any size moves
/// through bounded memory.
public protocol FileProviderReadWrite: FileProviderBasic {
    /// Opens a file for reading and returns its contents as a stream of chunks.
    ///
    /// Errors about the file itself (not found, is a folder, version changed) are thrown here, before
    /// any byte is delivered; transport errors surface while iterating.
    func readStream(path: String, options: ReadOptions) async throws -> ByteStream

    /// Writes a stream to `path` and returns the new item's attributes.
    ///
    /// With `options.atomically`, a failure or cancellation leaves nothing under `path` (an existing
    /// file there stays as it was).
    func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject
}

extension FileProviderReadWrite {
    /// Streams `length` bytes (or to the end) starting at `offset`.
    public func readStream(path: String, offset: Int64 = 0, length: Int64? = nil) async throws -> ByteStream {
        try await readStream(path: path, options: ReadOptions(offset: offset, length: length))
    }

    /// Reads a whole file, or the range `offset..<offset+length`, into memory. For small contents.
    public func contents(path: String, offset: Int64 = 0, length: Int64? = nil) async throws -> Data {
        try await readStream(path: path, offset: offset, length: length).collect()
    }

    /// Writes bytes held in memory.
    @discardableResult
    public func writeContents(path: String, data: Data, overwrite: Bool = true, atomically: Bool = true) async throws -> FileObject {
        try await write(path: path, from: ByteStream(data: data),
                        options: WriteOptions(overwrite: overwrite, atomically: atomically, expectedSize: Int64(data.count)))
    }

    /// Writes the contents of a local file, streamed.
    @discardableResult
    public func write(path: String, fromLocalFile url: URL, options: WriteOptions = WriteOptions()) async throws -> FileObject {
        let stream = try ByteStream.contentsOfFile(at: url)
        var options = options
        if options.expectedSize == nil { options.expectedSize = stream.expectedLength }
        return try await write(path: path, from: stream, options: options)
    }

    /// Writes any `AsyncSequence` of `Data` chunks.
    @discardableResult
    public func write<S: AsyncSequence & Sendable>(path: String, from sequence: S, options: WriteOptions = WriteOptions()) async throws -> FileObject where S.Element == Data {
        try await write(path: path, from: ByteStream(sequence, expectedLength: options.expectedSize), options: options)
    }
}
