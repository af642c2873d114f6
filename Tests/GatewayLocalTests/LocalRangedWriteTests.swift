import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// Local's ranged writes (`FileProviderRangedWrite`, the pieces of one file that plan workers
/// write from several processes): a range takes exactly its length, never a byte outside it.
@Suite("Local ranged writes")
struct LocalRangedWriteTests {
    func withProvider(_ body: (LocalFileProvider, TemporaryFolder) async throws -> Void) async throws {
        let root = try TemporaryFolder.make(prefix: "gateway-ranges")
        defer { root.remove() }
        try await body(try LocalFileProvider(name: "ranges", root: root.path), root)
    }

    /// `count` bytes of `byte`, as a stream of `chunk`-byte pieces.
    func stream(_ byte: UInt8, count: Int, chunk: Int) -> ByteStream {
        ByteStream(data: Data(repeating: byte, count: count), chunkSize: chunk)
    }

    @Test("ranges meet in one partial file; the name appears only at commit, with exactly the ranges' bytes")
    func rangesCommit() async throws {
        try await withProvider { local, root in
            try await local.writeRange(path: "/f.bin", key: "k1", size: 16, offset: 8, length: 8, from: stream(0x42, count: 8, chunk: 3), progress: nil)
            #expect(try await local.rangedWriteSize(path: "/f.bin", key: "k1") == 16)
            #expect(try await local.rangedWriteSize(path: "/f.bin", key: "other") == nil)
            #expect(!FileManager.default.fileExists(atPath: root.path + "/f.bin"))
            try await local.writeRange(path: "/f.bin", key: "k1", size: 16, offset: 0, length: 8, from: stream(0x41, count: 8, chunk: 8), progress: nil)
            let item = try await local.commitRanges(path: "/f.bin", key: "k1", size: 16, options: WriteOptions(overwrite: false))
            #expect(item.size == 16)
            #expect(FileManager.default.contents(atPath: root.path + "/f.bin") == Data(repeating: 0x41, count: 8) + Data(repeating: 0x42, count: 8))
            #expect(try await local.rangedWriteSize(path: "/f.bin", key: "k1") == nil)
        }
    }

    @Test("a stream shorter or longer than its range fails as truncated and writes nothing outside the range",
          arguments: [1, 4, 64])
    func wrongLengthStreams(chunk: Int) async throws {
        try await withProvider { local, root in
            // Another worker's range first: [8, 16) holds 'B'.
            try await local.writeRange(path: "/f.bin", key: "k", size: 16, offset: 8, length: 8, from: stream(0x42, count: 8, chunk: 8), progress: nil)
            for count in [5, 12] {
                do {
                    try await local.writeRange(path: "/f.bin", key: "k", size: 16, offset: 0, length: 8,
                                               from: stream(0x41, count: count, chunk: chunk), progress: nil)
                    Issue.record("a stream of \(count) bytes for a range of 8 was taken")
                } catch {
                    #expect({ if case .truncated = error as? FileProviderError { true } else { false } }(), "\(count) bytes: \(error)")
                }
                #expect(try await local.rangedWriteSize(path: "/f.bin", key: "k") == 16, "the partial file keeps its size")
            }
            // The other worker's bytes are intact: the long stream never wrote past its range.
            let partial = try #require(try FileManager.default.contentsOfDirectory(atPath: root.path).first { $0.hasSuffix(".partial") })
            let bytes = try #require(FileManager.default.contents(atPath: root.path + "/" + partial))
            #expect(bytes.count == 16)
            #expect(bytes.suffix(8) == Data(repeating: 0x42, count: 8))
            try await local.discardRanges(path: "/f.bin", key: "k")
            #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)
        }
    }

    @Test("a range outside the file, or a partial file larger than planned, is refused")
    func badRanges() async throws {
        try await withProvider { local, _ in
            for (size, offset, length) in [(Int64(16), Int64(12), Int64(8)), (16, -1, 4), (16, 4, -1), (-1, 0, 0), (16, 17, 0), (Int64.max, Int64.max, 1)] {
                await expectFailure(.invalidInput) {
                    try await local.writeRange(path: "/g.bin", key: "k", size: size, offset: offset, length: length,
                                               from: ByteStream(data: Data()), progress: nil)
                }
            }
            try await local.writeRange(path: "/g.bin", key: "k", size: 16, offset: 0, length: 4, from: stream(0x41, count: 4, chunk: 4), progress: nil)
            // The same key with a smaller size: the partial file is larger than that plan's file.
            await expectFailure(.invalidInput) {
                try await local.writeRange(path: "/g.bin", key: "k", size: 8, offset: 0, length: 4, from: stream(0x41, count: 4, chunk: 4), progress: nil)
            }
        }
    }
}
