public import Foundation

/// Cuts bytes that arrive in chunks (a listing, a manifest, a plan file) into lines ending in LF,
/// holding at most the line in progress and the chunk being cut: the one bounded line reader the
/// parsers of every backend share.
///
/// A line longer than `maximumLength` bytes (an unterminated line included, as soon as it passes
/// the bound) throws ``LineTooLong``, so a peer that never ends a line cannot grow memory. A byte
/// is scanned at most twice (for the last LF of its chunk, and for the next line), never again as
/// a line grows. With `dropsCarriageReturn`, a CR before the LF is dropped too (CRLF, as
/// FTP servers send).
public struct LineBuffer: Sendable {
    /// A line of `length` bytes or more, longer than the bound.
    public struct LineTooLong: Error, Sendable, Equatable {
        /// How many bytes of the line had arrived when it was refused.
        public let length: Int
    }

    /// The longest line accepted, in bytes (without its line ending).
    public let maximumLength: Int
    /// Whether a CR before the LF is dropped with it.
    public let dropsCarriageReturn: Bool
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the next LF resumes (everything before it was scanned).
    private var scanned = 0
    /// How many bytes follow the last LF appended.
    private var tail = 0

    public init(maximumLength: Int, dropsCarriageReturn: Bool = false) {
        self.maximumLength = max(0, maximumLength)
        self.dropsCarriageReturn = dropsCarriageReturn
    }

    /// Adds the next chunk; throws when the line in progress (the bytes after the last LF) passes
    /// ``maximumLength``. Complete lines in the chunk are checked as ``next()`` takes them.
    public mutating func append(_ data: Data) throws(LineTooLong) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
        buffer.append(contentsOf: data)
        if let newline = data.lastIndex(of: UInt8(ascii: "\n")) {
            tail = data.distance(from: newline, to: data.endIndex) - 1
        } else {
            tail += data.count
        }
        if tail > maximumLength { throw LineTooLong(length: tail) }
    }

    /// The next complete line, without its line ending; `nil` until more bytes come.
    public mutating func next() throws(LineTooLong) -> ArraySlice<UInt8>? {
        guard let newline = buffer[max(start, scanned)...].firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = buffer.count
            return nil
        }
        let line = trimmed(buffer[start..<newline])
        start = newline + 1
        scanned = start
        if line.count > maximumLength { throw LineTooLong(length: line.count) }
        return line
    }

    /// The bytes after the last line ending (a last line without one), or `nil` when there are none.
    public mutating func finish() -> ArraySlice<UInt8>? {
        guard start < buffer.count else { return nil }
        let line = trimmed(buffer[start...])
        start = buffer.count
        scanned = start
        tail = 0
        return line
    }

    /// Whether bytes after the last line ending wait for theirs (a stream cut mid-line, at its end).
    public var hasPartialLine: Bool { start < buffer.count }

    private func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard dropsCarriageReturn, line.last == UInt8(ascii: "\r") else { return line }
        return line.dropLast()
    }
}
