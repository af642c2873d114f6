import Foundation

/// Applies a byte range on the client when a server sends the whole file (WebDAV, S3): the body
/// without its first `skip` bytes and at most `limit` long.
package enum RangeCutter {
    package static func cut(_ body: ByteStream, skip: Int64, limit: Int64?, totalLength: Int64?, path: String) -> ByteStream {
        if skip == 0 && limit == nil { return body }
        let cutter = Cutter(body: body, skip: skip, limit: limit)
        var expected: Int64?
        if let totalLength {
            let available = max(0, totalLength - skip)
            expected = limit.map { min($0, available) } ?? available
        }
        return ByteStream(expectedLength: expected) { try await cutter.next() }
    }

    /// Skips `skip` bytes, then delivers at most `limit`. Used by one consumer at a time.
    private final class Cutter: @unchecked Sendable {
        private var iterator: ByteStream.AsyncIterator
        private var toSkip: Int64
        private var remaining: Int64

        init(body: ByteStream, skip: Int64, limit: Int64?) {
            iterator = body.makeAsyncIterator()
            toSkip = skip
            remaining = limit ?? .max
        }

        func next() async throws -> Data? {
            while remaining > 0 {
                guard var chunk = try await iterator.next() else { return nil }
                if toSkip > 0 {
                    let dropped = min(Int64(chunk.count), toSkip)
                    toSkip -= dropped
                    chunk = Data(chunk.dropFirst(Int(dropped)))
                    if chunk.isEmpty { continue }
                }
                if Int64(chunk.count) > remaining { chunk = Data(chunk.prefix(Int(remaining))) }
                remaining -= Int64(chunk.count)
                return chunk
            }
            return nil
        }
    }
}
