/// At most `width` child tasks of a throwing task group running at once: ``add(_:to:)`` waits for
/// one of them to end before it starts another while `width` run. The group stays the caller's
/// (so it can collect results, or start other tasks); an error a finished task threw comes out of
/// the `add` that waited for it, and the group's scope cancels the rest.
///
/// ```swift
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     var slots = TaskSlots(width: 8)
///     for key in keys { try await slots.add({ try await delete(key) }, to: &group) }
///     try await group.waitForAll()
/// }
/// ```
public struct TaskSlots: Sendable {
    /// The most tasks running at once (at least 1).
    public let width: Int
    private var running = 0

    /// Slots for `width` tasks at once.
    public init(width: Int) { self.width = max(1, width) }

    /// Starts `task` in `group`, first waiting for a running one to end while `width` run.
    public mutating func add(_ task: @escaping @Sendable () async throws -> Void,
                             to group: inout ThrowingTaskGroup<Void, any Error>) async throws {
        if running >= width {
            try await group.next()
            running -= 1
        }
        group.addTask(operation: task)
        running += 1
    }
}

extension Sequence where Element: Sendable {
    /// Runs `body` for each element, at most `width` at once. The first error thrown cancels the
    /// others and is rethrown once they have ended.
    public func concurrentForEach(width: Int, _ body: @escaping @Sendable (Element) async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var slots = TaskSlots(width: width)
            for element in self { try await slots.add({ try await body(element) }, to: &group) }
            try await group.waitForAll()
        }
    }
}
