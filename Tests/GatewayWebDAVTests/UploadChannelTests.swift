import Foundation
@testable import GatewayTestSupport
import GatewayCore
@testable import GatewayTransport
import Testing

/// The request-body channel between an async stream and libcurl's read callback.
@Suite("Upload channel")
struct UploadChannelTests {
    /// Reads everything the channel delivers, as libcurl's thread would.
    func drain(_ channel: UploadChannel, limit: Int = .max) -> Data? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1000)
        while data.count < limit {
            let count = buffer.withUnsafeMutableBytes { channel.read(into: $0.baseAddress!, capacity: min(1000, limit - data.count)) }
            guard let count else { return nil }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    @Test("delivers every byte in order, and can replay the start for a resend")
    func rewind() async throws {
        let payload = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let channel = UploadChannel(capacity: 1 << 20)
        let pump = Task { await channel.pump(ByteStream(data: payload, chunkSize: 4096)) }
        let firstPart = await onThread { drain(channel, limit: 10_000) }
        #expect(firstPart == payload.prefix(10_000))
        #expect(channel.rewind())
        let all = await onThread { drain(channel) }
        #expect(all == payload)
        await pump.value
    }

    @Test("a read takes bytes from several chunks; empty chunks are not the end; a full buffer resumes its sender")
    func chunking() async throws {
        let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        // 512-byte chunks with an empty one after each, through a buffer far smaller than the payload.
        let chunks = Counter()
        let stream = ByteStream(expectedLength: Int64(payload.count)) {
            let index = chunks.next() - 1
            let start = (index / 2) * 512
            guard start < payload.count else { return nil }
            return index % 2 == 1 ? Data() : payload.subdata(in: start..<min(start + 512, payload.count))
        }
        let channel = UploadChannel(capacity: 8 * 1024)
        let pump = Task { await channel.pump(stream) }
        let (all, firstRead) = await onThread { () -> (Data?, Int) in
            var buffer = [UInt8](repeating: 0, count: 4000)
            while channel.bufferedForTesting < 4000 { usleep(1000) }
            let first = buffer.withUnsafeMutableBytes { channel.read(into: $0.baseAddress!, capacity: 4000) } ?? 0
            var rest = drain(channel) ?? Data()
            rest.insert(contentsOf: buffer[0..<first], at: 0)
            return (rest, first)
        }
        #expect(firstRead == 4000, "one read spans eight chunks")
        #expect(all == payload)
        await pump.value
    }

    @Test("cannot replay once more than the replay limit went out")
    func rewindLimit() async throws {
        let payload = Data(count: UploadChannel.replayLimit + 300_000)
        let channel = UploadChannel(capacity: 256 * 1024)
        let pump = Task { await channel.pump(ByteStream(data: payload, chunkSize: 64 * 1024)) }
        _ = await onThread { drain(channel, limit: UploadChannel.replayLimit + 200_000) }
        #expect(!channel.rewind())
        channel.close()
        await pump.value
    }

    @Test("a failing stream makes the read callback report an abort")
    func failingStream() async throws {
        struct Broken: Error {}
        let channel = UploadChannel(capacity: 1 << 20)
        let calls = Counter()
        let stream = ByteStream(expectedLength: nil) {
            if calls.next() > 2 { throw Broken() }
            return Data(count: 100)
        }
        let pump = Task { await channel.pump(stream) }
        let result = await onThread { drain(channel) }
        #expect(result == nil)
        #expect(channel.streamError is Broken)
        await pump.value
    }
}

/// Runs `body` on a thread of its own, as libcurl's reads run: the blocking reads must not hold one
/// of the few threads of Swift's cooperative pool, which the pumping tasks need.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int { lock.withLock { value += 1; return value } }
}
