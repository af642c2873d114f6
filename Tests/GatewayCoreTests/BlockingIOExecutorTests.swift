import Foundation
import Synchronization
@testable import GatewayCore
import Testing

/// The threads blocking work (libcurl's transfers, file reads) runs on, and the task executor on them.
@Suite("Blocking I/O executor", .timeLimit(.minutes(1)))
struct BlockingIOExecutorTests {
    @Test("one job after another reuses the same thread")
    func reuse() async throws {
        let threads = BlockingIOExecutor()
        var seen: Set<UInt> = []
        for _ in 0..<20 {
            let id = await withCheckedContinuation { continuation in
                threads.run { continuation.resume(returning: UInt(bitPattern: Int(bitPattern: pthread_self()))) }
            }
            seen.insert(id)
            while threads.idleCount == 0 { try await Task.sleep(for: .milliseconds(1)) }  // the thread is back (cancellable: the time limit can stop it)
        }
        #expect(seen.count == 1, "20 jobs in sequence ran on \(seen.count) threads")
        #expect(threads.startedCount == 1)
    }

    @Test("jobs that wait for each other each get a thread (a download feeding an upload)")
    func blockingJobsDoNotStarve() async {
        let threads = BlockingIOExecutor()
        let count = 6
        // Every job blocks until all have started: with fewer threads than jobs this never ends.
        let barrier = Barrier(count: count)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        threads.run {
                            barrier.arriveAndWait()
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
        let threads = BlockingIOExecutor(idleTimeout: 0.05)
        await withCheckedContinuation { continuation in threads.run { continuation.resume() } }
        // The thread goes idle, then ends after 50 ms of it.
        while threads.endedCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        await withCheckedContinuation { continuation in threads.run { continuation.resume() } }
        #expect(threads.startedCount == 2)
    }

    @Test("a task preferring the executor runs on its threads, before and after it suspends; others do not")
    func taskPreference() async throws {
        let executor = BlockingIOExecutor()
        #expect(!BlockingIOExecutor.isCurrentThread, "the test itself runs on the concurrency pool")
        let onIt = await withTaskExecutorPreference(executor) { () async -> [Bool] in
            let before = BlockingIOExecutor.isCurrentThread
            try? await Task.sleep(for: .milliseconds(5))
            let after = BlockingIOExecutor.isCurrentThread
            // A child task inherits the preference; an unstructured task does not (an upload
            // channel's pump runs on the concurrency pool, never on a thread a transfer blocks).
            async let child = BlockingIOExecutor.isCurrentThread
            let unstructured = await Task { BlockingIOExecutor.isCurrentThread }.value
            return [before, after, await child, unstructured]
        }
        #expect(onIt == [true, true, true, false])
        #expect(executor.startedCount >= 1)
    }

    @Test("tasks that block on each other on the executor still all run (it grows instead of starving)")
    func blockingTasks() async {
        let executor = BlockingIOExecutor()
        let count = 5
        let barrier = Barrier(count: count)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                // Blocks its thread, as an inline transfer does, until every task got this far.
                group.addTask(executorPreference: executor) { barrier.arriveAndWait() }
            }
        }
        #expect(executor.startedCount >= count)
    }
}

/// Blocks each caller of ``arriveAndWait()`` until `count` callers arrived, then lets all go.
private final class Barrier: Sendable {
    private let count: Int
    private let arrived = Mutex(0)
    private let released = DispatchSemaphore(value: 0)

    init(count: Int) { self.count = count }

    func arriveAndWait() {
        if arrived.withLock({ $0 += 1; return $0 }) == count { for _ in 0..<count { released.signal() } }
        released.wait()
    }
}
