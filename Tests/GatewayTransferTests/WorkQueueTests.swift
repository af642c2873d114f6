import Foundation
@testable import GatewayTestSupport
@testable import GatewayTransfer
import Synchronization
import Testing

/// The copy engine's bounded queue between the tree walk, the checkers and the transfers.
@Suite("Work queue", .timeLimit(.minutes(1)))
struct WorkQueueTests {
    @Test("items come out in order; a finished queue drains, then gives nil")
    func order() async {
        let queue = WorkQueue<Int>(capacity: 10)
        for value in 0..<5 { await queue.send(value) }
        queue.finish()
        var received: [Int] = []
        while let value = await queue.next() { received.append(value) }
        #expect(received == [0, 1, 2, 3, 4])
        #expect(await queue.next() == nil)
    }

    @Test("a sender waits while the queue is full, and goes on once an item is taken")
    func backPressure() async throws {
        let queue = WorkQueue<Int>(capacity: 2)
        let sent = Mutex(0)
        let producer = Task {
            for value in 0..<3 {
                await queue.send(value)
                sent.withLock { $0 += 1 }
            }
        }
        // Two fit; the third waits: its sender is seen waiting (not a time that passed).
        try await waitUntil("the third sender waits") { queue.waiting.senders == 1 }
        #expect(sent.withLock { $0 } == 2, "the third item went in past the capacity")
        #expect(await queue.next() == 0)
        await producer.value
        #expect(sent.withLock { $0 } == 3)
        #expect(await queue.next() == 1)
        #expect(await queue.next() == 2)
    }

    @Test("finishing wakes consumers waiting on an empty queue, and senders waiting on a full one")
    func finishWakesWaiters() async throws {
        let empty = WorkQueue<Int>(capacity: 1)
        let consumers = (0..<3).map { _ in Task { await empty.next() } }
        while empty.waiting.takers < 3 { try await Task.sleep(for: .milliseconds(1)) }
        empty.finish()
        for consumer in consumers { #expect(await consumer.value == nil) }

        let full = WorkQueue<Int>(capacity: 1)
        await full.send(1)
        let sender = Task { await full.send(2) }
        while full.waiting.senders < 1 { try await Task.sleep(for: .milliseconds(1)) }
        full.finish()
        await sender.value  // returns instead of waiting for room forever
        #expect(await full.next() == 1)
        #expect(await full.next() == 2, "a waiting sender's item is kept, as one sent after finish() is")
        #expect(await full.next() == nil)
    }

    @Test("senders waiting on a full queue all get their items in, however takers and senders interleave")
    func noStrandedSender() async throws {
        // Two senders wait on a full queue of one. A taker takes, then at once waits again on the
        // queue it emptied. When a take only woke a sender to try again, that sender handed its item
        // to the waiting taker directly, the room stayed unused and the second sender waited forever.
        let queue = WorkQueue<Int>(capacity: 1)
        await queue.send(0)
        let first = Task { await queue.send(1) }
        while queue.waiting.senders < 1 { try await Task.sleep(for: .milliseconds(1)) }
        let second = Task { await queue.send(2) }
        while queue.waiting.senders < 2 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(await queue.next() == 0)
        #expect(await queue.next() == 1)
        #expect(await queue.next() == 2)
        await first.value
        await second.value
        #expect(queue.waiting.senders == 0 && queue.waiting.takers == 0)
    }

    @Test("many senders and takers: every item arrives exactly once")
    func manyToMany() async {
        let queue = WorkQueue<Int>(capacity: 3)
        let producers = 4, perProducer = 500
        let received = await withTaskGroup(of: [Int].self) { group in
            for consumer in 0..<3 {
                group.addTask {
                    var mine: [Int] = []
                    while let value = await queue.next() {
                        mine.append(value)
                        if value % (7 + consumer) == 0 { await Task.yield() }
                    }
                    return mine
                }
            }
            group.addTask {
                await withTaskGroup(of: Void.self) { senders in
                    for producer in 0..<producers {
                        senders.addTask { for index in 0..<perProducer { await queue.send(producer * perProducer + index) } }
                    }
                }
                queue.finish()
                return []
            }
            var all: [Int] = []
            for await part in group { all += part }
            return all
        }
        #expect(received.count == producers * perProducer)
        #expect(Set(received) == Set(0..<(producers * perProducer)))
    }
}
