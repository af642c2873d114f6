public import Foundation
import GatewayCore

/// The record of one item trashed on a bucket that keeps versions: which version of each key the
/// item was made of when it was removed, so that undo can copy those versions back. A small text
/// object in the trash prefix; the objects' bytes stay where they are, as older versions.
///
/// ```
/// gateway-versions 1 folder %2Fdocs 1795011000
/// 3HL4kqtJlcpXroDTDmJ-rmSpXd3dIbrHY 120 report.pdf
/// null 0 
/// ```
///
/// The first line names the kind (`file` or `folder`), the item's path and the removal time
/// (seconds since 1970); each further line a version id, its size and the key below the item (empty
/// for a file, or a folder's own marker). Paths, keys and version ids are percent-encoded, so a line
/// holds no space or line break of its own. Lines are at most ``maximumLineLength`` bytes.
public enum S3VersionManifest {
    /// File or folder.
    public enum Kind: String, Sendable, Equatable {
        case file, folder
    }

    /// The first line.
    public struct Header: Sendable, Equatable {
        public var kind: Kind
        /// The item's path on the remote when it was removed.
        public var path: String
        /// When it was removed (to the second).
        public var deletionDate: Date

        public init(kind: Kind, path: String, deletionDate: Date) {
            self.kind = kind
            self.path = path
            self.deletionDate = deletionDate
        }
    }

    /// One version the item was made of.
    public struct Entry: Sendable, Equatable {
        /// The version id (`null` for an object stored before versioning was turned on).
        public var version: String
        public var size: Int64
        /// The key below the item's own key prefix (empty for a file).
        public var relativeKey: String

        public init(version: String, size: Int64, relativeKey: String) {
            self.version = version
            self.size = size
            self.relativeKey = relativeKey
        }
    }

    /// A manifest that cannot be read.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// The longest line read: a 1,024-byte key percent-encoded three times over, and room to spare.
    public static let maximumLineLength = 16 << 10
    static let magic = "gateway-versions"

    /// The header's line, with its line break.
    public static func line(_ header: Header) -> String {
        let seconds = Int64(header.deletionDate.timeIntervalSince1970.rounded(.down))
        return "\(magic) 1 \(header.kind.rawValue) \(S3URIEncoding.encode(header.path)) \(seconds)\n"
    }

    /// An entry's line, with its line break.
    public static func line(_ entry: Entry) -> String {
        "\(S3URIEncoding.encode(entry.version)) \(entry.size) \(S3URIEncoding.encode(entry.relativeKey))\n"
    }

    /// The header in `line` (without its line break).
    public static func header(_ line: Substring) throws(Failure) -> Header {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0] == magic, fields[1] == "1" else { throw Failure("not a version manifest") }
        guard let kind = Kind(rawValue: String(fields[2])) else { throw Failure("an item of the kind \"\(fields[2].prefix(20))\"") }
        guard let path = S3URIEncoding.decode(fields[3]), path.hasPrefix("/"), !path.contains("\0") else {
            throw Failure("a path that does not decode")
        }
        guard let seconds = Int64(fields[4]), abs(seconds) < 253_402_300_800 else { throw Failure("a removal time of \"\(fields[4].prefix(30))\"") }
        return Header(kind: kind, path: path, deletionDate: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// The entry in `line` (without its line break).
    public static func entry(_ line: Substring) throws(Failure) -> Entry {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 3 else { throw Failure("an entry of \(fields.count) fields") }
        guard let version = S3URIEncoding.decode(fields[0]), !version.isEmpty else { throw Failure("a version id that does not decode") }
        guard let size = Int64(fields[1]), size >= 0 else { throw Failure("an entry of the size \"\(fields[1].prefix(30))\"") }
        guard let key = S3URIEncoding.decode(fields[2]), !key.contains("\0") else { throw Failure("a key that does not decode") }
        return Entry(version: version, size: size, relativeKey: key)
    }

    /// Cuts a manifest read in chunks into lines, holding at most one line and a chunk
    /// (GatewayCore's ``LineBuffer``, bounded at ``maximumLineLength``).
    public struct LineReader: Sendable {
        private var buffer = LineBuffer(maximumLength: S3VersionManifest.maximumLineLength)

        public init() {}

        /// The lines completed by `chunk`, without their line breaks.
        public mutating func lines(in chunk: Data) throws(Failure) -> [Substring] {
            do {
                try buffer.append(chunk)
                var lines: [Substring] = []
                while let line = try buffer.next() { lines.append(Substring(String(decoding: line, as: UTF8.self))) }
                return lines
            } catch {
                throw Failure("a line longer than \(S3VersionManifest.maximumLineLength) bytes")
            }
        }

        /// Whether a last line was left without its line break (a manifest cut short).
        public var isCutShort: Bool { buffer.hasPartialLine }
    }
}
