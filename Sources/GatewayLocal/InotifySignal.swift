#if canImport(Glibc)
import Glibc
import Foundation
import GatewayCore
import GatewayState
package import Synchronization

/// Counts kept for tests and diagnostics.
package enum InotifyStatistics {
    /// Kernel queue overflows seen by any watcher of this process.
    package static let overflows = Atomic<Int>(0)
    /// Tests only: while `true`, reader threads wait before reading, so the kernel's queue fills
    /// and overflows at its own limit (no need to lower `fs.inotify.max_queued_events`, a setting
    /// every inotify instance made meanwhile, in any program, would inherit).
    package static let readingHeld = Atomic<Bool>(false)
}

/// inotify(7) as a ``ChangeSignal``: a watch on each folder of the watched tree (added as rounds
/// meet the folders), a reader thread that turns events into the set of folders that changed, and
/// a short quiet period that coalesces bursts (a file written in 100 pieces is listed once).
///
/// A kernel queue overflow (`IN_Q_OVERFLOW`) asks for a comparison of the whole tree, which
/// reports whatever the lost events would have. Reaching the watch limit is an error that names
/// the `fs.inotify.max_user_watches` setting, never silence.
final class InotifySignal: ChangeSignal, Sendable {
    private struct State {
        var folders: [Int32: String] = [:]
        var watches: [String: Int32] = [:]
        var dirty = Set<String>()
        /// Starts `true`: the first batch compares the whole tree, which watches every folder (a
        /// stream that caught up from its log without a round has none yet).
        var overflow = true
        var cancelled = false
        var lastEvent: ContinuousClock.Instant?
        var failure: FileProviderError?
        var waiter: CheckedContinuation<Void, Never>?
        var stopped = false
    }

    private let descriptor: Int32
    /// Written to wake the reader thread when stopping.
    private let wake: (read: Int32, write: Int32)
    private let hostRoot: String
    private let recursive: Bool
    private let watchedFolder: String
    private let state = Mutex(State())
    /// The quiet time that ends a batch, and the longest a batch waits.
    private let quiet: Duration = .milliseconds(60)
    private let longest: Duration = .seconds(1)

    static let mask: UInt32 = UInt32(IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB)
        | UInt32(IN_ONLYDIR) | UInt32(IN_DONT_FOLLOW) | UInt32(IN_EXCL_UNLINK)

    /// Starts watching `folder` (a remote path) of a provider rooted at `hostRoot`.
    init(hostRoot: String, folder: String, recursive: Bool) throws {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else {
            let code = errno
            if code == EMFILE {
                throw FileProviderError.unavailable(reason: "inotify instance limit reached (fs.inotify.max_user_instances = \(Self.setting("max_user_instances"))); raise it with sysctl", path: folder)
            }
            throw CocoaError.posix(code, path: folder, remote: nil)
        }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            close(descriptor)
            throw CocoaError.posix(errno, path: folder, remote: nil)
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        self.descriptor = descriptor
        self.wake = (ends[0], ends[1])
        self.hostRoot = hostRoot == "/" ? "" : hostRoot
        self.recursive = recursive
        self.watchedFolder = folder
        let thread = Thread { [self] in self.readEvents() }
        thread.name = "gateway-inotify"
        thread.start()
    }

    /// The watch limit that applies here: this user namespace's own
    /// (`/proc/sys/user/max_inotify_watches`, the same as `fs.inotify.max_user_watches` outside
    /// any namespace), or the machine's setting where that file is missing.
    static var watchLimit: String {
        (try? String(contentsOfFile: "/proc/sys/user/max_inotify_watches", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? setting("max_user_watches")
    }

    static func setting(_ name: String) -> String {
        (try? String(contentsOfFile: "/proc/sys/fs/inotify/\(name)", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
    }

    func stop() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.stopped else { return nil }
            state.stopped = true
            defer { state.waiter = nil }
            return state.waiter
        }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        waiter?.resume()
    }

    // MARK: Observer

    func willList(folder: String) {
        guard recursive || folder == watchedFolder else { return }
        let known = state.withLock { $0.watches[folder] != nil || $0.stopped }
        guard !known else { return }
        let watch = inotify_add_watch(descriptor, hostRoot + folder, Self.mask)
        if watch < 0 {
            let code = errno
            guard code == ENOSPC || code == ENOMEM else { return } // gone, or not a folder: its parent reports it
            let failure = FileProviderError.unavailable(
                reason: "inotify watch limit reached (fs.inotify.max_user_watches = \(Self.watchLimit)); raise it with sysctl, or watch a smaller tree",
                path: folder)
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.failure = failure
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
            return
        }
        state.withLock { state in
            if let previous = state.folders[watch], previous != folder { state.watches[previous] = nil }
            state.folders[watch] = folder
            state.watches[folder] = watch
        }
    }

    func didRename(folder old: String, to new: String) {
        state.withLock { state in
            let prefix = old + "/"
            for (path, watch) in state.watches where path == old || path.hasPrefix(prefix) {
                let moved = new + path.dropFirst(old.count)
                state.watches[path] = nil
                state.watches[moved] = watch
                state.folders[watch] = moved
            }
        }
    }

    func didRemove(folder: String) {
        let removed = state.withLock { state -> [Int32] in
            let prefix = folder + "/"
            var removed: [Int32] = []
            for (path, watch) in state.watches where path == folder || path.hasPrefix(prefix) {
                state.watches[path] = nil
                state.folders[watch] = nil
                removed.append(watch)
            }
            return removed
        }
        for watch in removed { inotify_rm_watch(descriptor, watch) }
    }

    // MARK: Batches

    func next() async throws -> ChangeSignalBatch {
        while true {
            try Task.checkCancellation()
            let ready = try state.withLock { state -> Bool in
                if let failure = state.failure { throw failure }
                return state.overflow || !state.dirty.isEmpty || state.stopped
            }
            if ready { break }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        if state.overflow || !state.dirty.isEmpty || state.stopped || state.failure != nil || state.cancelled { return true }
                        state.waiter = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    state.cancelled = true
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
            }
        }
        // Coalesce: wait until the events have been quiet for a moment (or the batch is old enough).
        let started = ContinuousClock.now
        while ContinuousClock.now - started < longest {
            try await Task.sleep(for: quiet)
            let last = state.withLock { $0.lastEvent }
            if let last, ContinuousClock.now - last < quiet { continue }
            break
        }
        return try state.withLock { state in
            if let failure = state.failure { throw failure }
            if state.stopped { throw CancellationError() }
            defer {
                state.dirty.removeAll()
                state.overflow = false
            }
            return state.overflow ? .everything : .folders(state.dirty)
        }
    }

    deinit {
        close(descriptor)
        close(wake.read)
        close(wake.write)
    }

    // MARK: Reader thread

    private func readEvents() {
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        // The descriptors are closed in deinit, once nothing (this thread, stop(), willList) can
        // use them: closing here could close numbers another part of the process reuses.
        defer { buffer.deallocate() }
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        while true {
            if state.withLock({ $0.stopped }) { return }
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            while InotifyStatistics.readingHeld.load(ordering: .relaxed) {
                if state.withLock({ $0.stopped }) { return }
                usleep(5_000)
            }
            while true {
                let count = read(descriptor, buffer, size)
                if count <= 0 { break }
                handle(buffer, count: count)
            }
        }
    }

    private func handle(_ buffer: UnsafeMutableRawPointer, count: Int) {
        let headerSize = MemoryLayout<inotify_event>.size
        var offset = 0
        var touched: [Int32] = []
        var overflow = false
        var ignored: [Int32] = []
        while offset + headerSize <= count {
            let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
            offset += headerSize + Int(event.len)
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                overflow = true
                InotifyStatistics.overflows.add(1, ordering: .relaxed)
                continue
            }
            if event.mask & UInt32(IN_IGNORED) != 0 {
                ignored.append(event.wd)
                continue
            }
            touched.append(event.wd)
        }
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            // Events first: a folder's last events can come in the same read as its IN_IGNORED.
            for wd in touched {
                if let folder = state.folders[wd] { state.dirty.insert(folder) }
            }
            // A watch the kernel dropped (its folder removed, or replaced by a new one that may even
            // reuse the inode): list that path again, which watches a new folder there.
            for wd in ignored {
                guard let folder = state.folders.removeValue(forKey: wd) else { continue }
                if state.watches[folder] == wd { state.watches[folder] = nil }
                state.dirty.insert(folder)
            }
            if overflow { state.overflow = true }
            guard overflow || !touched.isEmpty || !ignored.isEmpty else { return nil }
            state.lastEvent = .now
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
#endif
