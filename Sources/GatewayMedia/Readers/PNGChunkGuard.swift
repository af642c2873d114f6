import Foundation
import GatewayCore

/// Checks a PNG's chunks before libpng sees them: libpng allocates a chunk's declared length
/// before reading it, so a 650-byte file whose `eXIf` chunk claims a gigabyte makes it reserve a
/// gigabyte (and a real file that large would be read into memory whole). Chunks before the
/// image data larger than ``maximumChunk`` are refused as a damaged file; only the 8-byte chunk
/// headers are read.
enum PNGChunkGuard {
    /// The largest chunk before the image data allowed (ICC profiles, text and EXIF are far
    /// smaller in real files).
    static let maximumChunk: UInt32 = 16 << 20

    static func check(_ input: any MediaInput, path: String) throws {
        var header = [UInt8](repeating: 0, count: 8)
        var offset: Int64 = 8   // after the signature
        for _ in 0..<1000 {
            let got = try header.withUnsafeMutableBytes { try input.read(at: offset, into: $0.baseAddress!, count: 8) }
            guard got == 8 else { return }   // truncated: libpng reports it
            let length = UInt32(header[0]) << 24 | UInt32(header[1]) << 16 | UInt32(header[2]) << 8 | UInt32(header[3])
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if type == "IDAT" || type == "IEND" { return }
            guard length <= maximumChunk else {
                throw CocoaError.described(.fileReadCorruptFile, path: path, reason:
                    "its PNG chunk \(TerminalText.escaped(type)) claims \(length) bytes (at most \(maximumChunk) are read before the image data)")
            }
            offset += 12 + Int64(length)
        }
    }
}
