import Foundation

/// The threads libcurl's blocking transfers run on: kept and reused, so a request does not pay for
/// creating a thread (a clone, a stack mapped and unmapped, a first switch). Copying 2,000 small
/// files is 4,000 requests.
///
/// A transfer never waits for a free thread: when none is idle a new one starts, so transfers that
/// block on each other (a download feeding an upload) cannot starve. A thread idle for
/// `idleTimeout` ends. Each client owns one set; nothing here is global.
final class TransferThreads: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var idle = 0
    private var started = 0
    private var ended = 0
    private let idleTimeout: TimeInterval
    private let stackSize: Int

    /// Threads that end after `idleTimeout` seconds without work, with `stackSize`-byte stacks.
    init(idleTimeout: TimeInterval = 10, stackSize: Int = 512 << 10) {
        self.idleTimeout = idleTimeout
        self.stackSize = stackSize
    }

    /// Threads started so far (for tests).
    var startedCount: Int { condition.withLock { started } }
    /// Threads waiting for work (for tests).
    var idleCount: Int { condition.withLock { idle } }
    /// Threads that ended after their idle time-out (for tests).
    var endedCount: Int { condition.withLock { ended } }

    /// Runs `job` on an idle thread, or on a new one when all are busy.
    func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let spawn = jobs.count > idle
        if spawn { started += 1 } else { condition.signal() }
        condition.unlock()
        guard spawn else { return }
        let thread = Thread { [self] in work() }
        thread.stackSize = stackSize
        thread.start()
    }

    private func work() {
        condition.lock()
        while true {
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            idle += 1
            let signalled = condition.wait(until: Date(timeIntervalSinceNow: idleTimeout))
            idle -= 1
            if !signalled && jobs.isEmpty { break }
        }
        ended += 1
        condition.unlock()
    }
}
