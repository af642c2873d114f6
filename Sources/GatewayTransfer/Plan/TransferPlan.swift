public import Foundation
import GatewayCore

/// What a plan's workers run: `copy`, `move`, `sync` or `check`.
public enum PlanMode: String, Sendable, Hashable, Codable, CaseIterable {
    case copy, move, sync, check

    /// The copy engine's mode (`nil` for `check`).
    public var copyMode: CopyMode? { CopyMode(rawValue: rawValue) }
}

/// A plan's manifest (`manifest.json` in the plan's folder): the source and destination, the mode
/// and options every worker uses, and what each chunk holds, down to its SHA-256.
///
/// The ``fingerprint`` covers everything but ``created``: the same tree planned twice gives the same
/// fingerprint, and a worker can tell a chunk file or a done-marker that belongs to another plan.
public struct TransferPlan: Sendable, Hashable, Codable {
    /// The manifest's `format` value.
    public static let formatName = "gateway-plan"
    /// The version of the manifest and chunk formats this code writes and reads.
    public static let formatVersion = 1

    /// One side of the run, as the workers resolve it with their own configuration.
    public struct Location: Sendable, Hashable, Codable {
        /// The remote's name; `nil` for the local file system.
        public var remote: String?
        /// The path on that remote (absolute for the local file system).
        public var path: String

        /// A side of the run.
        public init(remote: String?, path: String) {
            self.remote = remote
            self.path = path
        }

        /// As a user writes it: `REMOTE:PATH`, or the plain local path.
        public var display: String {
            guard let remote else { return path }
            return "\(remote):\(path.hasPrefix("/") ? String(path.dropFirst()) : path)"
        }
    }

    /// The comparison and replacement options of the run, fixed at planning so that every worker
    /// decides alike.
    public struct Options: Sendable, Hashable, Codable {
        public var checksum = false
        public var sizeOnly = false
        public var ignoreExisting = false
        public var update = false
        /// Replaced and deleted files go to the destination's trash (undoable).
        public var trash = true

        /// Default options.
        public init() {}

        enum CodingKeys: String, CodingKey {
            case checksum, trash
            case sizeOnly = "size_only", ignoreExisting = "ignore_existing", update
        }

        /// These options applied to `options` (a worker's, which sets the transfers and retries).
        public func applied(to options: CopyOptions) -> CopyOptions {
            var options = options
            options.checksum = checksum
            options.sizeOnly = sizeOnly
            options.ignoreExisting = ignoreExisting
            options.update = update
            options.useTrash = trash
            return options
        }
    }

    /// What one chunk holds.
    public struct Chunk: Sendable, Hashable, Codable {
        /// Its number, from 0.
        public var index: Int
        /// Files (and links to files) in it.
        public var files: Int
        /// Folders in it.
        public var folders: Int
        /// The files' bytes.
        public var bytes: Int64
        /// The chunk file's length in bytes.
        public var length: Int64
        /// The chunk file's SHA-256, lower-case hex.
        public var sha256: String

        /// A chunk's record.
        public init(index: Int, files: Int, folders: Int, bytes: Int64, length: Int64, sha256: String) {
            self.index = index
            self.files = files
            self.folders = folders
            self.bytes = bytes
            self.length = length
            self.sha256 = sha256
        }
    }

    /// A file too large for one chunk, split into byte ranges (``PlanEntry/Kind/range`` lines) that
    /// several chunks write into one partial file at the destination (``FileProviderRangedWrite``);
    /// `gateway finalize` moves it into place once every chunk is done.
    public struct SplitFile: Sendable, Hashable, Codable {
        /// The path relative to the plan's source (and destination).
        public var path: String
        /// The whole file's size, as listed.
        public var size: Int64
        /// Its modification time as listed, in seconds since 1970 (as exact as its chunk lines).
        public var modified: Double?
        /// The length of its ranges (the last one may be shorter).
        public var rangeLength: Int64

        enum CodingKeys: String, CodingKey {
            case path, size, modified
            case rangeLength = "range_length"
        }

        /// A split file's record.
        public init(path: String, size: Int64, modified: Date?, rangeLength: Int64) {
            self.path = path
            self.size = size
            self.modified = modified?.timeIntervalSince1970
            self.rangeLength = rangeLength
        }

        /// Its ranges, in order: `rangeLength` bytes each from 0, the last one up to the end.
        public var byteRanges: [PlanEntry.ByteRange] {
            guard rangeLength > 0 else { return [] }
            return stride(from: Int64(0), to: size, by: Int(rangeLength)).map {
                PlanEntry.ByteRange(offset: $0, length: min(rangeLength, size - $0))
            }
        }

        /// The modification time as a date.
        public var modificationDate: Date? { modified.map(Date.init(timeIntervalSince1970:)) }
    }

    public var format = Self.formatName
    public var version = Self.formatVersion
    public var mode: PlanMode
    public var source: Location
    public var destination: Location
    public var options: Options
    /// When the plan was made.
    public var created: Date
    /// Items the plan leaves out (links to folders, devices, sockets), which a walk would skip too.
    public var leftOut: Int
    /// The chunks, in order (`chunks[k].index == k`).
    public var chunks: [Chunk]
    /// The files split into ranges across chunks, in listing order; `nil` when none is.
    public var splitFiles: [SplitFile]?
    /// SHA-256 over everything above except ``created`` (see ``computeFingerprint()``).
    public var fingerprint: String

    enum CodingKeys: String, CodingKey {
        case format, version, mode, source, destination, options, created, chunks, fingerprint
        case leftOut = "left_out", splitFiles = "split_files"
    }

    /// A plan; its fingerprint is computed.
    public init(mode: PlanMode, source: Location, destination: Location, options: Options, created: Date = Date(),
                leftOut: Int = 0, chunks: [Chunk], splitFiles: [SplitFile] = []) {
        self.mode = mode
        self.source = source
        self.destination = destination
        self.options = options
        self.created = created
        self.leftOut = leftOut
        self.chunks = chunks
        self.splitFiles = splitFiles.isEmpty ? nil : splitFiles
        fingerprint = ""
        fingerprint = computeFingerprint()
    }

    /// Files in the whole plan (a split file once).
    public var files: Int { chunks.reduce(0) { $0 + $1.files } + (splitFiles?.count ?? 0) }

    /// The key naming the partial files of this plan's split files at the destination
    /// (``FileProviderRangedWrite``): another plan of the same file never shares them.
    public var rangeKey: String { "plan" + fingerprint.prefix(16) }
    /// Folders in the whole plan.
    public var folders: Int { chunks.reduce(0) { $0 + $1.folders } }
    /// Bytes of the whole plan's files.
    public var bytes: Int64 { chunks.reduce(0) { $0.saturatingAdding($1.bytes) } }

    /// The SHA-256 of the plan's canonical text: every field but ``created`` and the fingerprint.
    public func computeFingerprint() -> String {
        var hasher = ContentHasher(.sha256)
        func add(_ text: String) { hasher.update(Data((text + "\n").utf8)) }
        add("\(format) \(version) \(mode.rawValue)")
        for side in [source, destination] { add("\(side.remote.map { "r" + $0 } ?? "-")\t\(PlanEntry.escape(side.path))") }
        add("\(options.checksum) \(options.sizeOnly) \(options.ignoreExisting) \(options.update) \(options.trash) \(leftOut)")
        for chunk in chunks { add("\(chunk.index) \(chunk.files) \(chunk.folders) \(chunk.bytes) \(chunk.length) \(chunk.sha256)") }
        // Only where there are any: a plan without split files keeps the fingerprint it always had.
        for file in splitFiles ?? [] {
            add("s \(file.size) \(file.modified.map { String($0) } ?? "-") \(file.rangeLength)\t\(PlanEntry.escape(file.path))")
        }
        return hasher.finalize()
    }

    /// The manifest as JSON.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = PlanDates.encoding
        return try encoder.encode(self)
    }

    /// Reads and checks a manifest: its format and version, its chunks numbered in order, sane
    /// counts, and a fingerprint that matches its contents. Throws ``PlanFormatError/badManifest(_:)``.
    public static func decode(_ data: Data) throws -> TransferPlan {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = PlanDates.decoding
        let plan: TransferPlan
        do {
            plan = try decoder.decode(TransferPlan.self, from: data)
        } catch {
            throw PlanFormatError.badManifest("the manifest does not read as a plan (\(Self.reason(error)))")
        }
        guard plan.format == formatName else { throw PlanFormatError.badManifest("format is \"\(TerminalText.escaped(String(plan.format.prefix(40))))\"") }
        guard plan.version == formatVersion else {
            throw PlanFormatError.badManifest("format version \(plan.version); this gateway reads version \(formatVersion)")
        }
        guard !plan.chunks.isEmpty else { throw PlanFormatError.badManifest("the plan has no chunks") }
        for (position, chunk) in plan.chunks.enumerated() {
            guard chunk.index == position, chunk.files >= 0, chunk.folders >= 0, chunk.bytes >= 0, chunk.length >= 0,
                  chunk.sha256.count == 64, chunk.sha256.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
                throw PlanFormatError.badManifest("chunk record \(position) is malformed")
            }
        }
        guard plan.leftOut >= 0 else { throw PlanFormatError.badManifest("left_out is negative") }
        for file in plan.splitFiles ?? [] {
            // A real plan cuts a file into at most as many ranges as it has chunks (each is at least a share).
            guard file.size > 0, file.rangeLength > 0, file.rangeLength < file.size, file.modified?.isFinite ?? true,
                  (file.size - 1) / file.rangeLength < Int64(plan.chunks.count), (try? PlanEntry.checkedPath(Substring(PlanEntry.escape(file.path)))) != nil else {
                throw PlanFormatError.badManifest("split file record \"\(TerminalText.escaped(String(file.path.prefix(80))))\" is malformed")
            }
        }
        guard plan.computeFingerprint() == plan.fingerprint else {
            throw PlanFormatError.badManifest("its fingerprint does not match its contents (edited or damaged)")
        }
        return plan
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "no \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "a wrong value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.dataCorrupted(let context) where !context.codingPath.isEmpty:
            "a bad value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "not JSON"
        }
    }
}
