import CServeSystem
import Foundation

/// A ZIP archive written front to back, for a stream nobody can seek in (a response body): stored
/// entries (no compression), each file's CRC-32 and sizes in a data descriptor after its bytes,
/// ZIP64 where a size, an offset or the entry count needs it (APPNOTE 6.3.10, sections 4.3 and
/// 4.5.3). The central directory is spooled to an unlinked temporary file as entries end, so
/// memory stays flat whatever the archive holds.
///
/// A state machine value: ``file(_:modified:expectedSize:)``, then ``data(_:)`` any number of
/// times, then ``endFile()``; ``folder(_:modified:)`` between files; ``finish()`` once. Each call
/// returns the bytes to send next.
struct ZipStream {
    enum Failure: Error, CustomStringConvertible {
        /// A file grew past 4 GiB after its header said it would not.
        case sizeChanged(String)
        /// The spool of the central directory could not be written or read back.
        case spool(Int32)
        /// A call out of order (a bug in the caller).
        case misuse(String)
        /// An entry name longer than a ZIP can hold (65,535 bytes).
        case nameTooLong
        /// The archive grew past the size it may have.
        case limit(Int64)

        var description: String {
            switch self {
            case .sizeChanged(let name): return "\(name) grew past 4 GiB while it was archived"
            case .spool(let code): return "the archive's directory could not be spooled: \(String(cString: strerror(code)))"
            case .misuse(let what): return "zip stream misuse: \(what)"
            case .nameTooLong: return "an entry's name is longer than 65,535 bytes"
            case .limit(let bytes): return "the archive grew past its limit of \(bytes) bytes"
            }
        }
    }

    private struct OpenFile {
        var name: [UInt8]
        var time: UInt16
        var date: UInt16
        var offset: UInt64
        var zip64: Bool
        var crc: UInt32 = 0
        var size: UInt64 = 0
    }

    /// The bytes sent so far (the next entry's offset).
    private(set) var offset: UInt64 = 0
    /// Entries in the central directory so far.
    private(set) var count: UInt64 = 0
    private var open: OpenFile?
    private var finished = false
    /// The central directory so far, written as entries end (unlinked: it goes with the process).
    private let spool: Int32
    private var spooled: UInt64 = 0

    static let utf8Names: UInt16 = 0x0800
    static let dataDescriptor: UInt16 = 0x0008
    /// Version 4.5 (ZIP64) and 2.0 (folders, descriptors), made by Unix (3).
    static let versionZip64: UInt16 = 45
    static let versionPlain: UInt16 = 20
    static let madeBy: UInt16 = (3 << 8) | 45

    /// - Throws: ``Failure/spool(_:)`` when no temporary file can be made.
    init(temporaryDirectory: String = NSTemporaryDirectory()) throws {
        var template = Array((temporaryDirectory.hasSuffix("/") ? temporaryDirectory : temporaryDirectory + "/").utf8CString.dropLast())
        template += Array("gateway-zip-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw Failure.spool(errno) }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        unlink(path)
        spool = fd
    }

    /// Closes the spool; call when done (or abandoned).
    func close() {
        Glibc.close(spool)
    }

    /// The header of a file entry. `expectedSize` (the listing's) decides whether the entry is
    /// ZIP64: unknown or 4 GiB and above is.
    mutating func file(_ name: String, modified: Date?, expectedSize: Int64?) throws -> [UInt8] {
        guard open == nil, !finished else { throw Failure.misuse("a file entry inside another") }
        let zip64 = (expectedSize ?? Int64.max) >= 0xFFFF_FFFF
        let (time, date) = Self.dosTime(modified)
        let nameBytes = Array(name.utf8)
        guard nameBytes.count <= 0xFFFF else { throw Failure.nameTooLong }
        var header = [UInt8]()
        header.reserveCapacity(30 + nameBytes.count + 20)
        header.le32(0x0403_4b50)
        header.le16(zip64 ? Self.versionZip64 : Self.versionPlain)
        header.le16(Self.utf8Names | Self.dataDescriptor)
        header.le16(0) // stored
        header.le16(time)
        header.le16(date)
        header.le32(0) // CRC-32: in the descriptor
        header.le32(zip64 ? 0xFFFF_FFFF : 0)
        header.le32(zip64 ? 0xFFFF_FFFF : 0)
        header.le16(UInt16(clamping: nameBytes.count))
        header.le16(zip64 ? 20 : 0)
        header += nameBytes
        if zip64 {
            header.le16(0x0001)
            header.le16(16)
            header.le64(0)
            header.le64(0)
        }
        open = OpenFile(name: nameBytes, time: time, date: date, offset: offset, zip64: zip64)
        offset += UInt64(header.count)
        return header
    }

    /// Counts a piece of the open file's contents (sent by the caller as it is).
    mutating func data(_ bytes: Data) throws {
        guard var file = open else { throw Failure.misuse("data outside a file entry") }
        file.crc = bytes.withUnsafeBytes { raw in
            UInt32(crc32_z(UInt(file.crc), raw.bindMemory(to: UInt8.self).baseAddress, raw.count))
        }
        file.size += UInt64(bytes.count)
        offset += UInt64(bytes.count)
        open = file
    }

    /// The open file's data descriptor; its central directory record goes to the spool.
    mutating func endFile() throws -> [UInt8] {
        guard let file = open else { throw Failure.misuse("no file entry to end") }
        open = nil
        if !file.zip64, file.size >= 0xFFFF_FFFF { throw Failure.sizeChanged(String(decoding: file.name, as: UTF8.self)) }
        var descriptor = [UInt8]()
        descriptor.le32(0x0807_4b50)
        descriptor.le32(file.crc)
        if file.zip64 {
            descriptor.le64(file.size)
            descriptor.le64(file.size)
        } else {
            descriptor.le32(UInt32(file.size))
            descriptor.le32(UInt32(file.size))
        }
        offset += UInt64(descriptor.count)
        try record(name: file.name, time: file.time, date: file.date, flags: Self.utf8Names | Self.dataDescriptor, crc: file.crc,
                   size: file.size, headerOffset: file.offset, zip64Entry: file.zip64, attributes: 0o100644 << 16)
        return descriptor
    }

    /// A folder entry (`name` ends with `/`).
    mutating func folder(_ name: String, modified: Date?) throws -> [UInt8] {
        guard open == nil, !finished else { throw Failure.misuse("a folder entry inside a file") }
        let (time, date) = Self.dosTime(modified)
        let nameBytes = Array((name.hasSuffix("/") ? name : name + "/").utf8)
        guard nameBytes.count <= 0xFFFF else { throw Failure.nameTooLong }
        var header = [UInt8]()
        header.le32(0x0403_4b50)
        header.le16(Self.versionPlain)
        header.le16(Self.utf8Names)
        header.le16(0)
        header.le16(time)
        header.le16(date)
        header.le32(0)
        header.le32(0)
        header.le32(0)
        header.le16(UInt16(clamping: nameBytes.count))
        header.le16(0)
        header += nameBytes
        let at = offset
        offset += UInt64(header.count)
        // MS-DOS directory bit and a Unix folder mode.
        try record(name: nameBytes, time: time, date: date, flags: Self.utf8Names, crc: 0, size: 0, headerOffset: at,
                   zip64Entry: false, attributes: (0o040755 << 16) | 0x10)
        return header
    }

    /// Ends the archive: `send` gets the central directory (read back from the spool in pieces of
    /// at most 64 KiB), then the end records.
    mutating func finish(_ send: (Data) async throws -> Void) async throws {
        guard open == nil, !finished else { throw Failure.misuse("finish with a file entry open") }
        finished = true
        let directoryOffset = offset
        var position: off_t = 0
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while UInt64(position) < spooled {
            let read = buffer.withUnsafeMutableBytes { pread(spool, $0.baseAddress, $0.count, position) }
            guard read > 0 else { throw Failure.spool(read == 0 ? EIO : errno) }
            try await send(Data(buffer[0..<read]))
            position += off_t(read)
        }
        offset += spooled
        var end = [UInt8]()
        let needs64 = count >= 0xFFFF || spooled >= 0xFFFF_FFFF || directoryOffset >= 0xFFFF_FFFF
        if needs64 {
            let recordOffset = offset
            end.le32(0x0606_4b50)
            end.le64(44)
            end.le16(Self.madeBy)
            end.le16(Self.versionZip64)
            end.le32(0)
            end.le32(0)
            end.le64(count)
            end.le64(count)
            end.le64(spooled)
            end.le64(directoryOffset)
            end.le32(0x0706_4b50)
            end.le32(0)
            end.le64(recordOffset)
            end.le32(1)
        }
        end.le32(0x0605_4b50)
        end.le16(0)
        end.le16(0)
        end.le16(UInt16(clamping: min(count, 0xFFFF)))
        end.le16(UInt16(clamping: min(count, 0xFFFF)))
        end.le32(UInt32(clamping: min(spooled, 0xFFFF_FFFF)))
        end.le32(UInt32(clamping: min(directoryOffset, 0xFFFF_FFFF)))
        end.le16(0)
        offset += UInt64(end.count)
        try await send(Data(end))
    }

    private mutating func record(name: [UInt8], time: UInt16, date: UInt16, flags: UInt16, crc: UInt32, size: UInt64,
                                 headerOffset: UInt64, zip64Entry: Bool, attributes: UInt32) throws {
        let bigSize = size >= 0xFFFF_FFFF
        let bigOffset = headerOffset >= 0xFFFF_FFFF
        var extra = [UInt8]()
        if bigSize || bigOffset {
            extra.le16(0x0001)
            extra.le16(UInt16((bigSize ? 16 : 0) + (bigOffset ? 8 : 0)))
            if bigSize {
                extra.le64(size)
                extra.le64(size)
            }
            if bigOffset { extra.le64(headerOffset) }
        }
        var entry = [UInt8]()
        entry.reserveCapacity(46 + name.count + extra.count)
        entry.le32(0x0201_4b50)
        entry.le16(Self.madeBy)
        entry.le16(zip64Entry || bigSize || bigOffset ? Self.versionZip64 : Self.versionPlain)
        entry.le16(flags)
        entry.le16(0)
        entry.le16(time)
        entry.le16(date)
        entry.le32(crc)
        entry.le32(bigSize ? 0xFFFF_FFFF : UInt32(size))
        entry.le32(bigSize ? 0xFFFF_FFFF : UInt32(size))
        entry.le16(UInt16(clamping: name.count))
        entry.le16(UInt16(extra.count))
        entry.le16(0) // comment
        entry.le16(0) // disk
        entry.le16(0) // internal attributes
        entry.le32(attributes)
        entry.le32(bigOffset ? 0xFFFF_FFFF : UInt32(headerOffset))
        entry += name
        entry += extra
        var written = 0
        while written < entry.count {
            let result = entry.withUnsafeBytes { pwrite(spool, $0.baseAddress! + written, $0.count - written, off_t(spooled) + off_t(written)) }
            guard result > 0 else { throw Failure.spool(result == 0 ? EIO : errno) }
            written += result
        }
        spooled += UInt64(entry.count)
        count += 1
    }

    /// One segment of an entry's name as extractors read it safely (APPNOTE 4.4.17.1: `/` is the
    /// only separator): backslashes, control characters and bidirectional overrides become `_`,
    /// and `.`, `..` or nothing becomes `_`, so no extractor steps out of its folder.
    static func entryName(_ segment: String) -> String {
        let cleaned = String(String.UnicodeScalarView(segment.unicodeScalars.map { scalar in
            scalar == "\\" || scalar == "/" || scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value) ? "_" : scalar
        }))
        return cleaned.isEmpty || cleaned == "." || cleaned == ".." ? "_" : cleaned
    }

    /// MS-DOS time and date (UTC; 1980 to 2107, clamped; 2-second steps).
    static func dosTime(_ date: Date?) -> (time: UInt16, date: UInt16) {
        guard let date, date.timeIntervalSince1970.isFinite else { return (0, (1 << 5) | 1) }
        let fields = ServeText.utc(date)
        let year = Int(fields.tm_year) + 1900
        if year < 1980 { return (0, (1 << 5) | 1) }
        if year > 2107 { return (UInt16(23 << 11 | 59 << 5 | 29), UInt16(127 << 9 | 12 << 5 | 31)) }
        let time = UInt16(Int(fields.tm_hour) << 11 | Int(fields.tm_min) << 5 | Int(fields.tm_sec) / 2)
        let day = UInt16((year - 1980) << 9 | (Int(fields.tm_mon) + 1) << 5 | Int(fields.tm_mday))
        return (time, day)
    }
}

extension [UInt8] {
    mutating func le16(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func le32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func le64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
