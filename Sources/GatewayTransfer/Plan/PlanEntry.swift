public import Foundation
public import GatewayCore

/// One line of a plan's chunk file: a folder to create or a file to copy, named by its path
/// relative to the plan's source.
///
/// A line is tab-separated: `d PATH` for a folder, `f SIZE MTIME PATH` for a file, `l SIZE MTIME
/// PATH` for a symbolic link to a file (copied as the file it names), and `r SIZE MTIME OFFSET
/// LENGTH PATH` for the bytes `OFFSET..<OFFSET+LENGTH` of a file too large for one chunk, which
/// the plan splits across several (see ``TransferPlan/SplitFile``). `SIZE` is decimal bytes and
/// `MTIME` seconds since 1970 (the shortest decimal that reads back as the same `Double`), each `-`
/// when the source did not say. In `PATH`, a backslash, tab, line feed or carriage return is
/// written `\\`, `\t`, `\n`, `\r`, and any other control character as `\xHH`, so every name a
/// server can list fits on one line.
///
/// Chunk files come from other machines (a shared plan folder), so ``parse(_:)`` trusts nothing:
/// lines are at most ``maximumLineLength`` bytes, numbers are bounded, and a path that is absolute,
/// empty, or has `.`, `..` or empty components is refused (it could reach outside the
/// destination).
public struct PlanEntry: Sendable, Hashable {
    /// What the entry is.
    public enum Kind: String, Sendable, Hashable {
        /// A folder (created at the destination even when empty).
        case folder = "d"
        /// A file.
        case file = "f"
        /// A symbolic link to a file, copied as the file it names.
        case link = "l"
        /// A byte range of a file (``PlanEntry/range``), written into the file's shared partial
        /// file; `gateway finalize` moves the whole file into place.
        case range = "r"
    }

    /// Bytes of a file: `length` of them from `offset`.
    public struct ByteRange: Sendable, Hashable {
        public var offset: Int64
        public var length: Int64

        /// A range.
        public init(offset: Int64, length: Int64) {
            self.offset = offset
            self.length = length
        }
    }

    /// The longest line a chunk file may hold, in bytes (a path of 16,384 bytes, escaped, fits).
    public static let maximumLineLength = 1 << 16

    /// What the entry is.
    public var kind: Kind
    /// The path relative to the plan's source: components joined by `/`, never empty.
    public var path: String
    /// The file's size in bytes, when the source said (folders: `nil`).
    public var size: Int64?
    /// The file's modification time, when the source said.
    public var modified: Date?
    /// A ``Kind/range`` entry's bytes (then ``size`` is the whole file's); `nil` for the others.
    public var range: ByteRange?

    /// Creates an entry.
    public init(kind: Kind, path: String, size: Int64? = nil, modified: Date? = nil, range: ByteRange? = nil) {
        self.kind = kind
        self.path = path
        self.size = size
        self.modified = modified
        self.range = range
    }

    /// The bytes this entry moves: a range's length, a file's size.
    public var bytes: Int64 { range?.length ?? size ?? 0 }

    /// The entry for a source item at `relative` below the plan's source; `nil` for what a plan
    /// leaves out (links to folders, devices, sockets).
    public init?(_ item: FileObject, relative: String) {
        switch item.type {
        case .directory: self.init(kind: .folder, path: relative)
        case .file: self.init(kind: .file, path: relative, size: item.size, modified: item.modificationDate)
        case .symbolicLink where !item.isLinkToFolder:
            self.init(kind: .link, path: relative, size: item.size, modified: item.modificationDate)
        case .symbolicLink, .other: return nil
        }
    }

    /// The source item this entry stands for, at `path` (the source's own path of it).
    public func item(at path: String) -> FileObject {
        FileObject(path: path, type: kind == .folder ? .directory : kind == .link ? .symbolicLink : .file,
                   size: size, modificationDate: modified)
    }

    /// The entry as one line, without the line feed.
    public var line: String {
        let escaped = Self.escape(path)
        guard kind != .folder else { return "d\t" + escaped }
        let size = self.size.map { String($0) } ?? "-"
        let time = modified.map { String($0.timeIntervalSince1970) } ?? "-"
        if kind == .range, let range {
            return "r\t\(size)\t\(time)\t\(range.offset)\t\(range.length)\t\(escaped)"
        }
        return "\(kind.rawValue)\t\(size)\t\(time)\t\(escaped)"
    }

    /// Reads one line (without its line feed).
    public static func parse(_ line: Substring) throws -> PlanEntry {
        guard line.utf8.count <= maximumLineLength else { throw PlanFormatError.lineTooLong(line.utf8.count) }
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard let tag = fields.first, let kind = Kind(rawValue: String(tag)) else {
            throw PlanFormatError.malformedLine("unknown entry type \"\(TerminalText.escaped(String(fields.first?.prefix(8) ?? "")))\"")
        }
        switch kind {
        case .folder:
            guard fields.count == 2 else { throw PlanFormatError.malformedLine("a folder line has 2 fields, not \(fields.count)") }
            return PlanEntry(kind: .folder, path: try checkedPath(fields[1]))
        case .file, .link, .range:
            let count = kind == .range ? 6 : 4
            guard fields.count == count else {
                throw PlanFormatError.malformedLine("a \(kind == .range ? "range" : "file") line has \(count) fields, not \(fields.count)")
            }
            var size: Int64?
            if fields[1] != "-" { size = try byteCount(fields[1], "size") }
            var modified: Date?
            if fields[2] != "-" {
                // Any year from 1 BC to 9999 AD; no NaN, no infinity, no exponent games.
                guard fields[2].utf8.count <= 32, let seconds = Double(fields[2]), seconds.isFinite,
                      abs(seconds) < 253_402_300_800 else {
                    throw PlanFormatError.malformedLine("time \"\(TerminalText.escaped(String(fields[2].prefix(40))))\" is not seconds since 1970")
                }
                modified = Date(timeIntervalSince1970: seconds)
            }
            guard kind == .range else { return PlanEntry(kind: kind, path: try checkedPath(fields[3]), size: size, modified: modified) }
            let offset = try byteCount(fields[3], "offset"), length = try byteCount(fields[4], "length")
            guard let size, length > 0, offset < size, length <= size - offset else {
                throw PlanFormatError.malformedLine("the range \(offset)+\(length) does not lie inside its file")
            }
            return PlanEntry(kind: .range, path: try checkedPath(fields[5]), size: size, modified: modified,
                             range: ByteRange(offset: offset, length: length))
        }
    }

    /// A decimal byte count of at most 19 digits.
    private static func byteCount(_ field: Substring, _ name: String) throws -> Int64 {
        guard field.utf8.count <= 19, field.allSatisfy({ $0.isASCII && $0.isWholeNumber }), let value = Int64(field) else {
            throw PlanFormatError.malformedLine("\(name) \"\(TerminalText.escaped(String(field.prefix(24))))\" is not a byte count")
        }
        return value
    }

    /// `path` with backslashes and control characters escaped (see the type's description).
    static func escape(_ path: String) -> String {
        guard path.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\\") || $0 == 0x7F }) else { return path }
        var out = ""
        out.reserveCapacity(path.utf8.count + 8)
        for scalar in path.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The path a field holds, unescaped and checked.
    static func checkedPath(_ field: Substring) throws -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(field.utf8.count)
        var input = field.utf8.makeIterator()
        while let byte = input.next() {
            guard byte == UInt8(ascii: "\\") else {
                guard byte >= 0x20, byte != 0x7F else { throw PlanFormatError.malformedLine("an unescaped control character in a path") }
                bytes.append(byte)
                continue
            }
            switch input.next() {
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "x"):
                guard let high = input.next().flatMap(HexEscapes.hexValue), let low = input.next().flatMap(HexEscapes.hexValue) else {
                    throw PlanFormatError.malformedLine("a bad \\x escape in a path")
                }
                let value = high << 4 | low
                guard value != 0 else { throw PlanFormatError.malformedLine("a NUL character in a path") }
                bytes.append(value)
            default:
                throw PlanFormatError.malformedLine("a bad escape in a path")
            }
        }
        guard let path = String(validating: bytes, as: UTF8.self) else { throw PlanFormatError.malformedLine("a path that is not UTF-8") }
        guard !path.isEmpty, !path.hasPrefix("/"), !path.hasSuffix("/") else {
            throw PlanFormatError.unsafePath(TerminalText.escaped(path))
        }
        for component in path.split(separator: "/", omittingEmptySubsequences: false) where component.isEmpty || component == "." || component == ".." {
            throw PlanFormatError.unsafePath(TerminalText.escaped(path))
        }
        return path
    }
}

/// What is wrong with a plan: its manifest, a chunk file or a marker.
public enum PlanFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A chunk line longer than ``PlanEntry/maximumLineLength``.
    case lineTooLong(Int)
    /// A chunk line that does not read.
    case malformedLine(String)
    /// A path that could reach outside the destination (absolute, `..`, empty components).
    case unsafePath(String)
    /// The manifest does not read, or is of a format this version does not know.
    case badManifest(String)
    /// A chunk file differs from what the manifest recorded (changed or cut off since planning).
    case chunkChanged(index: Int, reason: String)
    /// There is no chunk of that number.
    case noSuchChunk(index: Int, count: Int)

    public var description: String {
        switch self {
        case .lineTooLong(let length): "a chunk line of \(length) bytes (at most \(PlanEntry.maximumLineLength))"
        case .malformedLine(let reason): "a malformed chunk line: \(reason)"
        case .unsafePath(let path): "an unsafe path in a chunk: \"\(path)\""
        case .badManifest(let reason): "not a gateway plan: \(reason)"
        case .chunkChanged(let index, let reason): "chunk \(index) changed since it was planned: \(reason)"
        case .noSuchChunk(let index, let count): "no chunk \(index): the plan has chunks 0 to \(count - 1)"
        }
    }
}
