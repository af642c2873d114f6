import Foundation
@testable import GatewayTestSupport
import GatewayCore
@testable import GatewayTransport
import Testing

/// The response-body channel between libcurl's write callback and an async consumer.
@Suite("Download channel", .timeLimit(.minutes(1)))
struct DownloadChannelTests {
    static let piece = 16 << 10  // what libcurl hands the write callback at most

    /// Pushes `payload` in libcurl-sized pieces, as the write callback would; returns whether every push was taken.
    static func pushAll(_ payload: Data, into channel: DownloadChannel, piece: Int = piece) -> Bool {
        payload.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + piece, bytes.count)
                guard channel.push(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) else { return false }
                offset = end
            }
            return true
        }
    }

    static func payload(_ count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
    }

    @Test("small pieces reach a slow consumer gathered into whole pooled buffers, every byte in order")
    func coalescing() async throws {
        let pool = ChunkBufferPool(size: 64 << 10, limit: 4)
        let channel = DownloadChannel(capacity: 1 << 20, pool: pool)
        let payload = Self.payload(1_000_000)
        // The producer runs first and to completion (the capacity holds it all): nobody is waiting,
        // so nothing is handed over early.
        let pushed = await onThread { Self.pushAll(payload, into: channel) }
        #expect(pushed)
        channel.finish(nil)
        var received = Data()
        var sizes: [Int] = []
        while let chunk = try await channel.next() {
            sizes.append(chunk.count)
            received.append(chunk)
        }
        #expect(received == payload)
        #expect(sizes.dropLast().allSatisfy { $0 == 64 << 10 }, "whole buffers, not 16 KiB pieces: \(sizes)")
        #expect(sizes.count == (payload.count + (64 << 10) - 1) / (64 << 10))
    }

    @Test("a waiting consumer gets a partly filled buffer once it holds the hand-off size")
    func handoffBySize() async throws {
        let pool = ChunkBufferPool(size: 256 << 10, limit: 4)
        let channel = DownloadChannel(capacity: 1 << 20, pool: pool, handoffSize: 48 << 10, handoffDelay: .seconds(3600))
        let waiting = Task { try await channel.next() }
        try await waitUntil("the consumer waits in next()") { channel.isWaitingForTesting }
        let payload = Self.payload(3 * Self.piece)
        #expect(await onThread { Self.pushAll(payload, into: channel) })
        let chunk = try await waiting.value
        #expect(chunk == payload, "handed over at 48 KiB, before the 256 KiB buffer was full")
        channel.finish(nil)
        #expect(try await channel.next() == nil)
    }

    @Test("hand-offs to a waiting consumer are slices of one buffer, which returns to the pool after the last slice")
    func slices() async throws {
        let pool = ChunkBufferPool(size: 64 << 10, limit: 4)
        let channel = DownloadChannel(capacity: 1 << 20, pool: pool, handoffSize: 16 << 10, handoffDelay: .seconds(3600))
        var received: [Data] = []
        // Signalled when a pushing thread is done: the push that hands a chunk over resumes the
        // consumer while that thread still holds the chunk, until its push returns.
        let pushed = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            // The consumer waits in next() (on the test's own task, so no Task object keeps the chunk)
            // until a thread pushes 16 KiB a moment later.
            let payload = Self.payload(16 << 10)
            Thread {
                // Once the consumer waits in next() (bounded: a broken channel fails below).
                let deadline = Date().addingTimeInterval(30)
                while !channel.isWaitingForTesting, Date() < deadline { usleep(1000) }
                _ = Self.pushAll(payload, into: channel)
                pushed.signal()
            }.start()
            received.append(try #require(try await channel.next()))
        }
        _ = await onThread {
            pushed.wait()
            pushed.wait()
            return true
        }
        let first = received[0].withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let second = received[1].withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        #expect(second == first + UInt(16 << 10), "the second hand-off continues the first one's buffer, uncopied")
        channel.finish(nil)
        #expect(try await channel.next() == nil)
        received.removeAll()
        let again = try #require(pool.take())
        #expect(UInt(bitPattern: again) == first, "the buffer went back to the pool once both slices were released")
        pool.give(again)
    }

    @Test("bytes below the hand-off size reach a waiting consumer once they are old enough (a quiet server)")
    func handoffByAge() async throws {
        let pool = ChunkBufferPool(size: 256 << 10, limit: 4)
        let channel = DownloadChannel(capacity: 1 << 20, pool: pool, handoffSize: 128 << 10, handoffDelay: .milliseconds(200))
        let delivered = Counter()
        let waiting = Task {
            let chunk = try await channel.next()
            _ = delivered.next()
            return chunk
        }
        while !channel.isWaitingForTesting { try await Task.sleep(for: .milliseconds(5)) }
        let payload = Self.payload(1000)
        #expect(await onThread { Self.pushAll(payload, into: channel) })
        // Neither the push nor an early flush hands 1,000 bytes over; a flush once they waited 200 ms does.
        channel.flushIfDue()
        #expect(delivered.next() == 1, "nothing was handed over before the delay")
        try await Task.sleep(for: .milliseconds(250))
        channel.flushIfDue()
        let chunk = try await waiting.value
        #expect(chunk == payload)
        // Not finished: the stream stays open.
        #expect(await onThread { Self.pushAll(Self.payload(10), into: channel) })
        channel.finish(nil)
        #expect(try await channel.next() == Self.payload(10))
        #expect(try await channel.next() == nil)
    }

    @Test("a failed transfer delivers the bytes it received, then its error")
    func failureAfterBytes() async throws {
        let pool = ChunkBufferPool(size: 64 << 10, limit: 4)
        let channel = DownloadChannel(capacity: 1 << 20, pool: pool)
        let payload = Self.payload(100_000)
        #expect(await onThread { Self.pushAll(payload, into: channel) })
        struct Broken: Error {}
        channel.finish(Broken())
        var received = Data()
        await #expect(throws: Broken.self) {
            while let chunk = try await channel.next() { received.append(chunk) }
        }
        #expect(received == payload)
    }

    @Test("a full channel blocks the producer until half is read; an abandoned one makes it stop")
    func backPressureAndAbandon() async throws {
        let pool = ChunkBufferPool(size: 64 << 10, limit: 4)
        // No hand-off by age: a producer paused between pushes on a busy machine must not split a buffer.
        let channel = DownloadChannel(capacity: 256 << 10, pool: pool, handoffDelay: .seconds(3600))
        let done = Counter()
        let producer = Task {
            await onThread { () -> Bool in
                let taken = Self.pushAll(Self.payload(4 << 20), into: channel)
                _ = done.next()
                return taken
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(done.next() == 1, "the producer is still blocked with 4 MiB pushed into a 256 KiB channel")
        var received = 0
        for _ in 0..<8 { received += try #require(try await channel.next()).count }
        #expect(received == 8 * (64 << 10))
        channel.abandon()
        #expect(await producer.value == false, "the producer learns the consumer is gone")
    }
}
