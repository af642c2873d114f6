import Foundation
@testable import GatewayTransport
import Testing

/// The threads libcurl's blocking transfers run on.
@Suite("Transfer threads", .timeLimit(.minutes(1)))
struct TransferThreadsTests {
    @Test("one transfer after another reuses the same thread")
    func reuse() async throws {
        let threads = TransferThreads()
        var seen: Set<UInt> = []
        for _ in 0..<20 {
            let id = await withCheckedContinuation { continuation in
                threads.run { continuation.resume(returning: UInt(bitPattern: Int(bitPattern: pthread_self()))) }
            }
            seen.insert(id)
            while threads.idleCount == 0 { try await Task.sleep(for: .milliseconds(1)) }  // the thread is back (cancellable: the time limit can stop it)
        }
        #expect(seen.count == 1, "20 transfers in sequence ran on \(seen.count) threads")
        #expect(threads.startedCount == 1)
    }

    @Test("transfers that wait for each other each get a thread (a download feeding an upload)")
    func blockingJobsDoNotStarve() async {
        let threads = TransferThreads()
        let count = 6
        let arrived = Counter()
        // Every job blocks until all have started: with fewer threads than jobs this never ends.
        let barrier = DispatchSemaphore(value: 0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        threads.run {
                            if arrived.next() == count { for _ in 0..<count { barrier.signal() } }
                            barrier.wait()
                            continuation.resume()
                        }
                    }
                }
            }
        }
        #expect(threads.startedCount == count)
    }

    @Test("an idle thread ends after its timeout; later work starts a new one")
    func idleTimeout() async throws {
        let threads = TransferThreads(idleTimeout: 0.05)
        await withCheckedContinuation { continuation in threads.run { continuation.resume() } }
        // The thread goes idle, then ends after 50 ms of it.
        while threads.endedCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        await withCheckedContinuation { continuation in threads.run { continuation.resume() } }
        #expect(threads.startedCount == 2)
    }

    @Test("header lines lose spaces, tabs, CR and LF at both ends, nothing inside")
    func trimming() {
        #expect(CurlTransfer.trimmingWhitespace(" \tContent-Type: text/plain; a=b \r\n") == "Content-Type: text/plain; a=b")
        #expect(CurlTransfer.trimmingWhitespace("\r\n") == "")
        #expect(CurlTransfer.trimmingWhitespace("ETag: \"x y\"") == "ETag: \"x y\"")
        #expect(CurlTransfer.trimmingWhitespace("  naïve ünïcode\u{a0}\r\n") == "naïve ünïcode\u{a0}")
    }
}
