import CExif
public import Foundation
public import GatewayCore

/// EXIF fields through libexif, from the EXIF block libvips found in the file's header (JPEG APP1,
/// PNG eXIf, WebP, HEIF, TIFF).
///
/// Every value is checked before use: an entry shorter than its declared count, a zero
/// denominator, a GPS angle out of range or a date that is not one gives no field, never a trap.
public enum ExifReader {
    /// The largest EXIF block read (JPEG's is at most 64 KiB; other containers allow more).
    public static let maximumSize = 4 << 20

    /// The fields of ``MediaMetadata`` EXIF records, set on `metadata`.
    public static func read(_ block: Data, into metadata: inout MediaMetadata) {
        guard !block.isEmpty, block.count <= maximumSize, let data = exif_data_new() else { return }
        defer { exif_data_unref(data) }
        // FOLLOW_SPECIFICATION would add missing mandatory entries with default values (an
        // orientation of 1 the file never recorded): read only what is there.
        exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        // PNG's eXIf and WebP's EXIF chunks hold the TIFF structure alone; libexif wants the
        // JPEG APP1 form, which starts with "Exif\0\0" (libvips adds it the same way).
        let marker = Data("Exif\0\0".utf8)
        let block = block.starts(with: Data("Exif".utf8)) ? block : marker + block
        block.withUnsafeBytes { bytes in
            exif_data_load_data(data, bytes.bindMemory(to: UInt8.self).baseAddress, UInt32(bytes.count))
        }
        let order = exif_data_get_byte_order(data)
        let ifds = data.pointee.ifd
        let reader = Reader(order: order)
        let ifd0 = ifds.0, exif = ifds.2, gps = ifds.3

        metadata.cameraMake = reader.text(ifd0, 0x010f)
        metadata.cameraModel = reader.text(ifd0, 0x0110)
        if let orientation = reader.integer(ifd0, 0x0112), (1...8).contains(orientation) { metadata.orientation = orientation }
        if let taken = reader.text(exif, 0x9003) ?? reader.text(ifd0, 0x0132) {
            metadata.dateTaken = isoDate(taken, offset: reader.text(exif, 0x9011))
        }
        if let exposure = reader.rational(exif, 0x829a), exposure > 0 { metadata.exposureTime = exposure }
        if let fNumber = reader.rational(exif, 0x829d), fNumber > 0 { metadata.fNumber = fNumber }
        if let iso = reader.integer(exif, 0x8827) ?? reader.integer(exif, 0x8833), iso > 0 { metadata.iso = iso }
        if let latitude = reader.angle(gps, 0x0002, reference: 0x0001, negative: "S", limit: 90) { metadata.gpsLatitude = latitude }
        if let longitude = reader.angle(gps, 0x0004, reference: 0x0003, negative: "W", limit: 180) { metadata.gpsLongitude = longitude }
    }

    /// `YYYY:MM:DD HH:MM:SS` (EXIF's form) as ISO 8601, with `offset` (`+02:00`) when valid.
    static func isoDate(_ text: String, offset: String?) -> String? {
        let bytes = Array(text.utf8.prefix(19))
        guard bytes.count == 19 else { return nil }
        let digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        guard digits.allSatisfy({ (0x30...0x39).contains(bytes[$0]) }),
              bytes[4] == 0x3a, bytes[7] == 0x3a, bytes[10] == 0x20 || bytes[10] == 0x54, bytes[13] == 0x3a, bytes[16] == 0x3a
        else { return nil }
        func number(_ range: Range<Int>) -> Int { range.reduce(0) { $0 * 10 + Int(bytes[$1] - 0x30) } }
        guard (1...12).contains(number(5..<7)), (1...31).contains(number(8..<10)), number(11..<13) < 24,
              number(14..<16) < 60, number(17..<19) < 61 else { return nil }
        var iso = String(decoding: bytes[0..<4], as: UTF8.self) + "-" + String(decoding: bytes[5..<7], as: UTF8.self) + "-"
            + String(decoding: bytes[8..<10], as: UTF8.self) + "T" + String(decoding: bytes[11..<19], as: UTF8.self)
        if let offset, offset.utf8.count == 6 {
            let o = Array(offset.utf8)
            if (o[0] == 0x2b || o[0] == 0x2d), [1, 2, 4, 5].allSatisfy({ (0x30...0x39).contains(o[$0]) }), o[3] == 0x3a {
                iso += offset
            }
        }
        return iso
    }

    /// Typed access to entries, bounds-checked.
    private struct Reader {
        let order: ExifByteOrder

        func entry(_ content: UnsafeMutablePointer<ExifContent>?, _ tag: UInt32) -> UnsafeMutablePointer<ExifEntry>? {
            guard let content, let entry = exif_content_get_entry(content, ExifTag(rawValue: tag)), entry.pointee.data != nil else { return nil }
            return entry
        }

        /// Whether the entry holds at least `count` components of its format.
        func holds(_ entry: UnsafeMutablePointer<ExifEntry>, _ count: Int) -> Bool {
            let size = Int(exif_format_get_size(entry.pointee.format))
            guard size > 0, entry.pointee.components >= count else { return false }
            return Int(entry.pointee.size) >= size * count
        }

        func text(_ content: UnsafeMutablePointer<ExifContent>?, _ tag: UInt32) -> String? {
            guard let entry = entry(content, tag), entry.pointee.format == EXIF_FORMAT_ASCII else { return nil }
            let buffer = UnsafeBufferPointer(start: entry.pointee.data, count: Int(entry.pointee.size))
            let end = buffer.firstIndex(of: 0) ?? buffer.count
            let text = String(decoding: buffer[0..<end], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            return text.isEmpty ? nil : text
        }

        func integer(_ content: UnsafeMutablePointer<ExifContent>?, _ tag: UInt32) -> Int? {
            guard let entry = entry(content, tag), holds(entry, 1) else { return nil }
            let data = entry.pointee.data!
            switch entry.pointee.format {
            case EXIF_FORMAT_SHORT: return Int(exif_get_short(data, order))
            case EXIF_FORMAT_SSHORT: return Int(exif_get_sshort(data, order))
            case EXIF_FORMAT_LONG: return Int(exif_get_long(data, order))
            case EXIF_FORMAT_SLONG: return Int(exif_get_slong(data, order))
            case EXIF_FORMAT_BYTE: return Int(data.pointee)
            default: return nil
            }
        }

        func rational(_ content: UnsafeMutablePointer<ExifContent>?, _ tag: UInt32, index: Int = 0) -> Double? {
            guard let entry = entry(content, tag), holds(entry, index + 1) else { return nil }
            let data = entry.pointee.data! + 8 * index
            switch entry.pointee.format {
            case EXIF_FORMAT_RATIONAL:
                let value = exif_get_rational(data, order)
                guard value.denominator != 0 else { return nil }
                return Double(value.numerator) / Double(value.denominator)
            case EXIF_FORMAT_SRATIONAL:
                let value = exif_get_srational(data, order)
                guard value.denominator != 0 else { return nil }
                return Double(value.numerator) / Double(value.denominator)
            default: return nil
            }
        }

        /// Degrees, minutes, seconds and a hemisphere reference, as signed decimal degrees.
        func angle(_ content: UnsafeMutablePointer<ExifContent>?, _ tag: UInt32, reference: UInt32, negative: String, limit: Double) -> Double? {
            guard let degrees = rational(content, tag, index: 0) else { return nil }
            let minutes = rational(content, tag, index: 1) ?? 0
            let seconds = rational(content, tag, index: 2) ?? 0
            let value = degrees + minutes / 60 + seconds / 3600
            guard value.isFinite, value >= 0, value <= limit else { return nil }
            // Seven decimals (about 1 cm) is all GPS has; more are rational-to-binary noise.
            let rounded = (value * 10_000_000).rounded() / 10_000_000
            return text(content, reference)?.uppercased().hasPrefix(negative) == true ? -rounded : rounded
        }
    }
}
