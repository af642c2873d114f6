import Foundation
@testable import GatewayCore
import Testing

/// The bounded line reader every parser of lines shares (FTP listings, S3 version manifests, plan
/// files).
@Suite("Bounded lines")
struct LineBufferTests {
    /// Every line of `text` cut into `size`-byte chunks, and what `finish` leaves.
    func lines(_ text: String, chunk size: Int, maximum: Int = 100, crlf: Bool = false) throws -> (lines: [String], rest: String?) {
        var buffer = LineBuffer(maximumLength: maximum, dropsCarriageReturn: crlf)
        let bytes = Data(text.utf8)
        var lines: [String] = []
        var start = 0
        while start < bytes.count {
            try buffer.append(bytes.subdata(in: start..<min(start + size, bytes.count)))
            while let line = try buffer.next() { lines.append(String(decoding: line, as: UTF8.self)) }
            start += size
        }
        return (lines, buffer.finish().map { String(decoding: $0, as: UTF8.self) })
    }

    @Test("lines cut anywhere come out whole and once; CR is dropped only when asked; the last line without an ending is kept")
    func cutAnywhere() throws {
        let text = "one\r\n\ntwo x\ncafé\r\nlast\r"
        for size in [1, 2, 3, 7, text.utf8.count] {
            let plain = try lines(text, chunk: size)
            #expect(plain.lines == ["one\r", "", "two x", "café\r"], "chunks of \(size)")
            #expect(plain.rest == "last\r")
            let crlf = try lines(text, chunk: size, crlf: true)
            #expect(crlf.lines == ["one", "", "two x", "café"], "chunks of \(size)")
            #expect(crlf.rest == "last")
        }
        #expect(try lines("a\n", chunk: 1).rest == nil)
        var buffer = LineBuffer(maximumLength: 10)
        try buffer.append(Data("a\nb".utf8))
        #expect(try buffer.next().map { Array($0) } == Array("a".utf8))
        #expect(buffer.hasPartialLine)
        #expect(try buffer.next() == nil)
        #expect(buffer.finish().map { Array($0) } == Array("b".utf8))
        #expect(!buffer.hasPartialLine)
    }

    @Test("a line past the bound throws: one that never ends as soon as it passes it, a complete one when it is taken")
    func bounded() throws {
        // Exactly the bound is a line; one byte more is not.
        #expect(try lines(String(repeating: "x", count: 100) + "\n", chunk: 7).lines == [String(repeating: "x", count: 100)])
        var endless = LineBuffer(maximumLength: 100)
        var appended = 0
        var refused: LineBuffer.LineTooLong?
        while appended < 1 << 20, refused == nil {
            do {
                try endless.append(Data(repeating: UInt8(ascii: "x"), count: 30))
                appended += 30
            } catch {
                refused = error
            }
            #expect(try endless.next() == nil)
        }
        #expect(refused == LineBuffer.LineTooLong(length: 120), "1 MiB without a line ending was taken")
        #expect(appended == 90)
        // A long line and its ending in one chunk: refused when taken, after the lines before it.
        var long = LineBuffer(maximumLength: 100)
        try long.append(Data(("ok\n" + String(repeating: "y", count: 101) + "\nz").utf8))
        #expect(try long.next().map { Array($0) } == Array("ok".utf8))
        #expect(throws: LineBuffer.LineTooLong(length: 101)) { _ = try long.next() }
    }
}
