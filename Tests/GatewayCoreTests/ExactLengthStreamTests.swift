import Foundation
import GatewayCore
import Testing

/// `ByteStream.exactly`: the one exact-length check of ranged reads and ranged uploads.
@Suite("Exact-length streams")
struct ExactLengthStreamTests {
    func chunks(_ sizes: [Int]) -> ByteStream {
        let parts = sizes.map { Data(repeating: 1, count: $0) }
        let index = LockedIndex()
        return ByteStream(expectedLength: nil) { index.next(of: parts) }
    }

    @Test("exactly the length passes whole, in its chunks, and announces the length")
    func exact() async throws {
        let stream = chunks([3, 4, 3]).exactly(10, path: "/f", what: "a range")
        #expect(stream.expectedLength == 10)
        #expect(try await stream.collect().count == 10)
        #expect(try await chunks([]).exactly(0, path: "/f").collect().isEmpty)
    }

    @Test("a short source fails when it ends, naming what and how much")
    func short() async throws {
        do {
            _ = try await chunks([3, 4]).exactly(10, path: "/f", what: "a range").collect()
            Issue.record("a short source must fail")
        } catch FileProviderError.truncated(let path, let reason) {
            #expect(path == "/f")
            #expect(reason == "received 7 of 10 bytes of a range")
        }
    }

    @Test("an overlong source fails before the byte beyond the length is handed on")
    func long() async throws {
        var iterator = chunks([6, 6]).exactly(10, path: "/f").makeAsyncIterator()
        #expect(try await iterator.next()?.count == 6)
        await #expect(throws: FileProviderError.self) { _ = try await iterator.next() }
        await #expect(throws: FileProviderError.self) { _ = try await chunks([11]).exactly(10, path: "/f").collect() }
    }
}

/// Hands out parts one by one.
private final class LockedIndex: @unchecked Sendable {
    private let lock = NSLock()
    private var index = 0
    func next(of parts: [Data]) -> Data? {
        lock.withLock {
            defer { index += 1 }
            return index < parts.count ? parts[index] : nil
        }
    }
}
