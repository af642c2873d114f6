/// A bounded, multi-producer multi-consumer async queue: `send` waits while `capacity` items wait,
/// so a fast producer (a tree walk) never runs far ahead of slow consumers (transfers) and memory
/// stays flat however large the tree.
actor WorkQueue<Element: Sendable> {
    private var items: [Element] = []
    private var head = 0
    private var finished = false
    private var consumers: [CheckedContinuation<Element?, Never>] = []
    private var producers: [CheckedContinuation<Void, Never>] = []
    private let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    private var count: Int { items.count - head }

    /// Adds an item, waiting while the queue is full.
    func send(_ element: Element) async {
        while count >= capacity && !finished {
            await withCheckedContinuation { producers.append($0) }
        }
        if !consumers.isEmpty {
            consumers.removeFirst().resume(returning: element)
            return
        }
        items.append(element)
    }

    /// Takes an item, waiting while the queue is empty; `nil` once finished and drained.
    func next() async -> Element? {
        if count > 0 {
            let element = items[head]
            head += 1
            if head > 1024 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            if !producers.isEmpty { producers.removeFirst().resume() }
            return element
        }
        if finished { return nil }
        return await withCheckedContinuation { consumers.append($0) }
    }

    /// No more items will come; waiting consumers get `nil`.
    func finish() {
        finished = true
        for consumer in consumers { consumer.resume(returning: nil) }
        consumers.removeAll()
        for producer in producers { producer.resume() }
        producers.removeAll()
    }
}
