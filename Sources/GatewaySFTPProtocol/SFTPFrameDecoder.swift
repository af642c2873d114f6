/// Cuts a byte stream into SFTP packets (a `uint32` length, then that many bytes), bounding the
/// length so a hostile or broken peer can't make the client hold more than
/// ``maximumPacketLength`` bytes.
public struct SFTPFrameDecoder: Sendable {
    /// The longest packet accepted. OpenSSH's limit is 256 KiB; readdir replies of long names and a
    /// server's larger read size stay well under this.
    public let maximumPacketLength: Int
    private var buffer: [UInt8] = []
    private var start = 0

    /// A decoder refusing packets longer than `maximumPacketLength` bytes.
    public init(maximumPacketLength: Int = 4 << 20) {
        self.maximumPacketLength = maximumPacketLength
    }

    /// Adds bytes as they arrive.
    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole packet's payload (type byte first), or `nil` until more bytes arrive.
    public mutating func next() throws -> [UInt8]? {
        let available = buffer.count - start
        guard available >= 4 else { return nil }
        let length = Int(UInt32(buffer[start]) << 24 | UInt32(buffer[start + 1]) << 16 | UInt32(buffer[start + 2]) << 8 | UInt32(buffer[start + 3]))
        guard length >= 1 else { throw SFTPDecodingError("an empty packet") }
        guard length <= maximumPacketLength else {
            throw SFTPDecodingError("a packet of \(length) bytes (at most \(maximumPacketLength))")
        }
        guard available - 4 >= length else { return nil }
        let payload = Array(buffer[(start + 4)..<(start + 4 + length)])
        start += 4 + length
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        return payload
    }

    /// Bytes received and not yet returned as a packet.
    public var pendingCount: Int { buffer.count - start }
}
