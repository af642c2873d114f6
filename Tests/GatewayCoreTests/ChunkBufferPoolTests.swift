import Foundation
import GatewayCore
@testable import GatewayLocal
import StorageGateway
import Testing

/// The Local provider's reusable read buffers.
@Suite("Local read buffers")
struct ChunkBufferPoolTests {
    @Test("a released chunk's buffer is handed out again; beyond the limit buffers are freed")
    func reuse() throws {
        let pool = ChunkBufferPool(size: 64, limit: 1)
        let first = try #require(pool.take())
        var data: Data? = pool.data(first, count: 10)
        #expect(data?.count == 10)
        data = nil
        let again = try #require(pool.take())
        #expect(again == first, "the released buffer comes back")
        let other = try #require(pool.take())
        #expect(other != first)
        pool.give(again)
        pool.give(other)  // over the limit: freed, not kept
        #expect(try #require(pool.take()) == first)
    }

    @Test("reads through pooled chunks return exactly the file's bytes, twice over")
    func pooledReads() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let bytes = Data((0..<(3 * 1_048_576 + 12_345)).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ $0 >> 11) })
        try bytes.write(to: folder.appendingPathComponent("f.bin"))
        let provider = try LocalFileProvider(name: "pool", root: folder.path)
        for _ in 0..<2 {
            var read = Data()
            for try await chunk in try await provider.readStream(path: "/f.bin", options: ReadOptions()) { read.append(chunk) }
            #expect(read == bytes)
        }
        var ranged = Data()
        for try await chunk in try await provider.readStream(path: "/f.bin", options: ReadOptions(offset: 1_000_000, length: 2_000_000)) {
            ranged.append(chunk)
        }
        #expect(ranged == bytes.subdata(in: 1_000_000..<3_000_000))
    }
}
