#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Foundation

/// Threads on which work may block in system calls (a network transfer, a file read), kept and
/// reused, and a task executor that runs Swift tasks on them.
///
/// The Swift concurrency pool has one thread per core and must never block. Work that does goes to
/// a thread of this set instead; and a task that prefers this executor
/// (`withTaskExecutorPreference(_:operation:)`) runs on these threads itself, so a provider it
/// calls may block right there (``isCurrentThread``): a small request then costs no hand-off to
/// another thread and no wake-up of the caller afterwards. Copying 2,000 small files to a server
/// is 4,000 requests, and those hand-offs were most of the client's CPU time.
///
/// Nothing ever waits for a free thread: when none is idle, a new one starts, so jobs that block
/// on each other (a download feeding an upload) cannot starve. A thread idle for `idleTimeout`
/// ends. Each owner (an HTTP or FTP client, a copy run) has its own set; nothing here is global
/// but the key that marks these threads.
public final class BlockingIOExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var idle = 0
    private var started = 0
    private var ended = 0
    private var submitted = 0
    private let idleTimeout: TimeInterval
    private let stackSize: Int

    /// Threads that end after `idleTimeout` seconds without work, with `stackSize`-byte stacks.
    public init(idleTimeout: TimeInterval = 10, stackSize: Int = 512 << 10) {
        self.idleTimeout = idleTimeout
        self.stackSize = stackSize
    }

    /// Whether the calling thread belongs to a `BlockingIOExecutor` (any instance): code running
    /// there may block without starving anything.
    public static var isCurrentThread: Bool { pthread_getspecific(blockingThreadKey) != nil }

    /// Threads started so far.
    package var startedCount: Int { condition.withLock { started } }
    /// Threads waiting for work.
    package var idleCount: Int { condition.withLock { idle } }
    /// Threads that ended after their idle time-out.
    package var endedCount: Int { condition.withLock { ended } }
    /// Jobs handed to the threads so far (tasks' jobs and ``run(_:)``'s work).
    package var submittedCount: Int { condition.withLock { submitted } }

    /// Runs a task's job on one of the threads.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        run { job.runSynchronously(on: executor) }
    }

    /// Runs `work` on an idle thread, or on a new one when all are busy.
    package func run(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(work)
        submitted += 1
        let spawn = jobs.count > idle
        if spawn { started += 1 } else { condition.signal() }
        condition.unlock()
        guard spawn else { return }
        let thread = Thread { [self] in loop() }
        thread.stackSize = stackSize
        thread.start()
    }

    private func loop() {
        pthread_setspecific(blockingThreadKey, UnsafeRawPointer(bitPattern: 1))
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

/// Marks the threads of every ``BlockingIOExecutor`` (set once per thread, never changed after).
private let blockingThreadKey: pthread_key_t = {
    var key = pthread_key_t()
    precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left")
    return key
}()
