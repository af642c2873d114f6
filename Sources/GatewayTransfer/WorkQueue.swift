import Synchronization

/// A bounded, multi-producer multi-consumer async queue: `send` waits while `capacity` items wait,
/// so a fast producer (a tree walk) never runs far ahead of slow consumers (transfers) and memory
/// stays flat however large the tree.
///
/// A lock, not an actor: taking an item that is there returns at once, on the caller's own thread
/// and executor. (As an actor, every `next()` of a transfer running on a ``BlockingIOExecutor``
/// hopped to the actor and back, two thread wake-ups per file.) Callers suspend only on an empty
/// (or, sending, a full) queue.
///
/// A sender waiting on a full queue leaves its item with it: the take that makes room moves that
/// item in and lets the sender go. (Waking the sender to try again instead could strand another
/// waiting sender: the woken one may hand its item straight to a consumer that meanwhile waits on
/// the empty queue, and nobody wakes the next.) So senders wait only while the queue is full,
/// consumers only while it is empty, never both.
final class WorkQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var head = 0
        var finished = false
        var consumers: [CheckedContinuation<Element?, Never>] = []
        var producers: [(element: Element, continuation: CheckedContinuation<Void, Never>)] = []
        var count: Int { items.count - head }

        mutating func take() -> Element {
            let element = items[head]
            head += 1
            if head > 1024 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            return element
        }
    }

    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Senders and takers waiting (for tests).
    var waiting: (senders: Int, takers: Int) { state.withLock { ($0.producers.count, $0.consumers.count) } }

    /// Adds an item, waiting while the queue is full.
    func send(_ element: Element) async {
        if place(element, orWait: nil) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if place(element, orWait: continuation) { continuation.resume() }
        }
    }

    /// Hands `element` to a waiting consumer or queues it, unless the queue is full; then, with
    /// `waiter`, leaves it with the queue, to be moved in (and `waiter` resumed) when there is room.
    private func place(_ element: Element, orWait waiter: CheckedContinuation<Void, Never>?) -> Bool {
        let outcome = state.withLock { state -> (consumer: CheckedContinuation<Element?, Never>?, placed: Bool) in
            if !state.consumers.isEmpty { return (state.consumers.removeFirst(), true) }
            if state.count < capacity || state.finished {
                state.items.append(element)
                return (nil, true)
            }
            if let waiter { state.producers.append((element, waiter)) }
            return (nil, false)
        }
        outcome.consumer?.resume(returning: element)
        return outcome.placed
    }

    /// Takes an item, waiting while the queue is empty; `nil` once finished and drained.
    func next() async -> Element? {
        if let ready = take(orWait: nil) { return ready }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
            if let ready = take(orWait: continuation) { continuation.resume(returning: ready) }
        }
    }

    /// The next item (`.some(nil)` once finished and drained), moving a waiting sender's item into
    /// the room it leaves; `nil` when the queue is empty, after registering `waiter` to be given the
    /// next item.
    private func take(orWait waiter: CheckedContinuation<Element?, Never>?) -> Element?? {
        let outcome = state.withLock { state -> (element: Element??, producer: CheckedContinuation<Void, Never>?) in
            if state.count > 0 {
                let element = state.take()
                guard !state.producers.isEmpty else { return (.some(element), nil) }
                let producer = state.producers.removeFirst()
                state.items.append(producer.element)
                return (.some(element), producer.continuation)
            }
            if state.finished { return (.some(nil), nil) }
            if let waiter { state.consumers.append(waiter) }
            return (nil, nil)
        }
        outcome.producer?.resume()
        return outcome.element
    }

    /// No more items will come; waiting consumers get `nil`. Items of senders still waiting are
    /// queued (and their senders let go), as any item sent after this is.
    func finish() {
        let (consumers, producers) = state.withLock { state in
            state.finished = true
            defer {
                state.consumers.removeAll()
                state.producers.removeAll()
            }
            state.items.append(contentsOf: state.producers.map(\.element))
            return (state.consumers, state.producers.map(\.continuation))
        }
        for consumer in consumers { consumer.resume(returning: nil) }
        for producer in producers { producer.resume() }
    }
}
