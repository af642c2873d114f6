public import Foundation
import GatewayCore

/// A chunk file of a plan, fetched to a local file and checked against its manifest: the entries
/// one worker runs, read a line at a time (memory stays flat whatever the chunk's size).
public struct PlanChunk: Sendable {
    /// The local file holding the chunk's lines.
    public let file: URL
    /// The plan's ``TransferPlan/rangeKey``, which names the partial files its ranges go to;
    /// a chunk without one fails its ranges.
    public let rangeKey: String?

    /// The chunk in the local file `file`, of the plan whose range key is `rangeKey`.
    public init(file: URL, rangeKey: String? = nil) {
        self.file = file
        self.rangeKey = rangeKey
    }

    /// A reader of the chunk's entries, from the first line.
    public func entries() throws -> Entries {
        try Entries(reader: LineReader(file: file))
    }

    /// The entries of a chunk file, in order.
    public struct Entries {
        var reader: LineReader

        /// The next entry, `nil` at the end; throws ``PlanFormatError`` for a line that does not read.
        public mutating func next() throws -> PlanEntry? {
            guard let line = try reader.next() else { return nil }
            return try PlanEntry.parse(line)
        }
    }
}

/// Lines of a local file, read in blocks: each at most ``PlanEntry/maximumLineLength`` bytes (a
/// longer one throws), the last one with or without its line feed (GatewayCore's ``LineBuffer``).
struct LineReader {
    private let handle: FileHandle
    private var lines = LineBuffer(maximumLength: PlanEntry.maximumLineLength)
    private var atEnd = false

    init(file: URL) throws {
        handle = try FileHandle(forReadingFrom: file)
    }

    /// The next line without its line feed, `nil` at the end of the file.
    mutating func next() throws -> Substring? {
        do {
            while true {
                if let line = try lines.next() { return try Self.text(line) }
                if atEnd { return try lines.finish().map(Self.text) }
                if let data = try handle.read(upToCount: 1 << 18), !data.isEmpty {
                    try lines.append(data)
                } else {
                    atEnd = true
                    try? handle.close()
                }
            }
        } catch let error as LineBuffer.LineTooLong {
            throw PlanFormatError.lineTooLong(error.length)
        }
    }

    private static func text(_ bytes: ArraySlice<UInt8>) throws -> Substring {
        guard bytes.count <= PlanEntry.maximumLineLength else { throw PlanFormatError.lineTooLong(bytes.count) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw PlanFormatError.malformedLine("a line that is not UTF-8") }
        return Substring(text)
    }
}
