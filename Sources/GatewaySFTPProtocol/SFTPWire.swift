/// The byte-level grammar of the SSH File Transfer Protocol, version 3
/// (draft-ietf-secsh-filexfer-02, what OpenSSH speaks): big-endian integers and length-prefixed
/// strings, read with bounds checked at every step and written into a growing array.

/// A reason a packet could not be read. Never a trap: every length comes from the peer and is
/// checked against what is left of the packet.
public struct SFTPDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, in a few words.
    public let reason: String

    /// Creates an error with its reason.
    public init(_ reason: String) { self.reason = reason }

    public var description: String { "malformed SFTP packet: \(reason)" }
}

/// Reads the fields of one packet's payload, front to back.
public struct SFTPReader: Sendable {
    private let bytes: [UInt8]
    private var index: Int
    private let end: Int

    /// A reader over `bytes[range]`.
    public init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        let range = range ?? bytes.indices
        index = range.lowerBound
        end = range.upperBound
    }

    /// The bytes not yet read.
    public var remaining: Int { end - index }

    /// Reads one byte.
    public mutating func readByte() throws -> UInt8 {
        guard index < end else { throw SFTPDecodingError("ends inside a byte field") }
        defer { index += 1 }
        return bytes[index]
    }

    /// Reads a big-endian `uint32`.
    public mutating func readUInt32() throws -> UInt32 {
        guard end - index >= 4 else { throw SFTPDecodingError("ends inside a uint32") }
        defer { index += 4 }
        return UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8 | UInt32(bytes[index + 3])
    }

    /// Reads a big-endian `uint64`.
    public mutating func readUInt64() throws -> UInt64 {
        let high = try readUInt32()
        let low = try readUInt32()
        return UInt64(high) << 32 | UInt64(low)
    }

    /// Reads a `string` (a `uint32` length, then that many bytes) as raw bytes.
    public mutating func readBytes() throws -> [UInt8] {
        let range = try readStringRange()
        return Array(bytes[range])
    }

    /// Reads a `string` and returns where its bytes are in the packet, without copying them.
    public mutating func readStringRange() throws -> Range<Int> {
        let length = Int(try readUInt32())
        guard length <= end - index else { throw SFTPDecodingError("a string of \(length) bytes where \(end - index) are left") }
        defer { index += length }
        return index..<(index + length)
    }

    /// Reads a `string` as UTF-8 text; bytes that are not UTF-8 are replaced (for messages, never for names).
    public mutating func readText() throws -> String {
        String(decoding: bytes[try readStringRange()], as: UTF8.self)
    }

    /// The bytes of a range returned by ``readStringRange()``.
    public func slice(_ range: Range<Int>) -> ArraySlice<UInt8> { bytes[range] }

    /// The bytes not yet read, consumed.
    public mutating func readRest() -> [UInt8] {
        defer { index = end }
        return Array(bytes[index..<end])
    }
}

/// Writes the fields of one packet, its `uint32` length reserved up front and filled in by ``finish()``.
public struct SFTPWriter: Sendable {
    /// The packet so far, its first four bytes the length placeholder.
    public private(set) var bytes: [UInt8]

    /// Starts a packet of the given type.
    public init(type: UInt8, capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity + 5)
        bytes.append(contentsOf: [0, 0, 0, 0, type])
    }

    /// Appends one byte.
    public mutating func write(_ value: UInt8) { bytes.append(value) }

    /// Appends a big-endian `uint32`.
    public mutating func write(_ value: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends a big-endian `uint64`.
    public mutating func write(_ value: UInt64) {
        write(UInt32(truncatingIfNeeded: value >> 32))
        write(UInt32(truncatingIfNeeded: value))
    }

    /// Appends a `string` of raw bytes.
    public mutating func write<Bytes: Collection>(string value: Bytes) where Bytes.Element == UInt8 {
        write(UInt32(truncatingIfNeeded: value.count))
        bytes.append(contentsOf: value)
    }

    /// Appends bytes as they are (no length prefix).
    public mutating func bytesAppend(_ data: [UInt8]) { bytes.append(contentsOf: data) }

    /// Appends a `string` of UTF-8 text.
    public mutating func write(string value: String) { write(string: Array(value.utf8)) }

    /// Fields alone, without a packet's length and type: the data of an extended request.
    public static func fields(_ write: (inout SFTPWriter) -> Void) -> [UInt8] {
        var writer = SFTPWriter(type: 0)
        write(&writer)
        return Array(writer.bytes.dropFirst(5))
    }

    /// The finished packet: its length field set to what follows it.
    public mutating func finish() -> [UInt8] {
        let length = UInt32(truncatingIfNeeded: bytes.count - 4)
        bytes[0] = UInt8(truncatingIfNeeded: length >> 24)
        bytes[1] = UInt8(truncatingIfNeeded: length >> 16)
        bytes[2] = UInt8(truncatingIfNeeded: length >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: length)
        return bytes
    }
}
