import Foundation
import Glibc

/// Runs a program to its end with `posix_spawn` and a blocking `waitpid` on the calling thread.
///
/// Not Foundation's `Process`: on Linux it learns of a child's exit through a socket the child
/// inherits, and `waitUntilExit()` off the main thread waits in a run loop for that news. Under
/// CPU load a full suite once hung there for good: the child had exited (a zombie nobody reaped)
/// and Swift Testing's time limit can't stop a blocked thread (swift-corelibs-foundation #4795).
enum ChildProcess {
    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: Data
    }

    struct SpawnError: Error, CustomStringConvertible {
        let description: String
    }

    /// Where a spawned program's standard stream goes.
    enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A file, created or truncated (output) or read (input).
        case file(String)
        /// A pipe whose other end the ``Spawned`` handle holds.
        case pipe
    }

    /// Runs `executable` with `arguments` in `directory`; `stdin` is written and closed (none:
    /// `/dev/null`). Both outputs are read at once, so neither can fill up and block the child.
    /// The status is the exit code, or the signal's number when a signal ended it (as `Process`).
    static func run(_ executable: String, _ arguments: [String], environment: [String: String], directory: String? = nil,
                    stdin: Data? = nil) throws -> Output {
        let child = try spawn(executable, arguments, environment: environment, directory: directory,
                              stdin: stdin == nil ? .null : .pipe, stdout: .pipe, stderr: .pipe)
        if let stdin { child.write(stdin) }
        child.closeInput()
        let (output, errors) = child.readOutputs()
        child.waitUntilExit()
        return Output(status: child.terminationStatus, stdout: output, stderr: errors)
    }

    /// Starts `executable` with `arguments` in `directory` (the test process's environment when
    /// none is given) and returns at once. Every signal has its default action in the child and
    /// none is blocked, whatever the test runner set for itself (it ignores SIGPIPE and may
    /// ignore SIGTERM).
    static func spawn(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
                      stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null) throws -> Spawned {
        // Close-on-exec: a program spawned by another thread inherits none of them (pipe2 isn't
        // in Swift's Glibc module; the moment between pipe and fcntl is the only window).
        func makePipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard Glibc.pipe(&fds) == 0 else { throw SpawnError(description: "pipe: errno \(errno)") }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fds[0], fds[1])
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var childEnds: [Int32] = [], ours: [Int32?] = [nil, nil, nil]
        for (fd, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, fd, path, fd == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .pipe:
                let pipe = try makePipe()
                let (child, mine) = fd == 0 ? (pipe.read, pipe.write) : (pipe.write, pipe.read)
                posix_spawn_file_actions_adddup2(&actions, child, fd)
                childEnds.append(child)
                ours[Int(fd)] = mine
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        // The working folder through the shell (posix_spawn has no portable chdir action); `exec`
        // keeps the pid.
        var argv = [executable] + arguments
        var program = executable
        if let directory {
            program = "/bin/sh"
            argv = ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, directory] + argv
        }
        let environmentLines = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let spawned = withCStrings(argv) { argvPointers in
            withCStrings(environmentLines) { environmentPointers in
                posix_spawn(&pid, program, &actions, &attributes, argvPointers, environmentPointers)
            }
        }
        for fd in childEnds { close(fd) }
        guard spawned == 0 else {
            for case let fd? in ours { close(fd) }
            throw SpawnError(description: "posix_spawn \(program): errno \(spawned)")
        }
        return Spawned(pid: pid, input: ours[0], output: ours[1], errors: ours[2])
    }

    /// A program started by ``spawn(_:_:environment:directory:stdin:stdout:stderr:)``, under the
    /// names Foundation's `Process` gives (`processIdentifier`, `isRunning`, `terminate()`,
    /// `waitUntilExit()`, `terminationStatus`). It is reaped by `waitpid` (never a run loop's
    /// news of it), by whichever caller asks first; waiting blocks the calling thread.
    final class Spawned: @unchecked Sendable {
        let processIdentifier: pid_t
        /// The ends of the pipes asked for: to write to the child's stdin, to read its outputs.
        let input: Int32?
        let output: Int32?
        let errors: Int32?
        private let lock = NSLock()
        private var status: Int32?
        private var inputOpen = true

        fileprivate init(pid: pid_t, input: Int32?, output: Int32?, errors: Int32?) {
            processIdentifier = pid
            self.input = input
            self.output = output
            self.errors = errors
        }

        /// Reaps the child if it has exited (never blocks); its status once reaped.
        private func reap() -> Int32? {
            lock.withLock {
                if let status { return status }
                var raw: Int32 = 0
                var result: pid_t
                repeat { result = waitpid(processIdentifier, &raw, WNOHANG) } while result < 0 && errno == EINTR
                guard result == processIdentifier else { return nil }
                // The exit code, or the signal's number when a signal ended it (as `Process`).
                status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : raw & 0x7f
                return status
            }
        }

        var isRunning: Bool { reap() == nil }

        /// Sends `signal` unless the child is already reaped (its pid may be someone else's then).
        func signal(_ signal: Int32) {
            lock.withLock { if status == nil { _ = Glibc.kill(processIdentifier, signal) } }
        }

        /// SIGTERM.
        func terminate() { signal(SIGTERM) }

        /// Blocks until the child has exited, and reaps it.
        func waitUntilExit() {
            while reap() == nil {
                // Waits for the exit without reaping it (WNOWAIT): `reap` does that, once.
                var info = siginfo_t()
                let result = waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT)
                if result < 0 && errno != EINTR { usleep(1000) }
            }
        }

        /// Waits on a thread of its own, holding none of Swift concurrency's few threads.
        func exited() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                Thread { self.waitUntilExit(); continuation.resume() }.start()
            }
        }

        /// The exit code (or the signal's number); 0 before the child is reaped.
        var terminationStatus: Int32 { reap() ?? 0 }

        /// Writes `data` to the child's stdin (a pipe); a child that stopped reading ends it
        /// quietly (EPIPE, never SIGPIPE for the test process). `false` when not all went.
        @discardableResult
        func write(_ data: Data) -> Bool {
            guard let input else { return false }
            Glibc.signal(SIGPIPE, SIG_IGN)
            return data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(input, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 { if errno == EINTR { continue }; return false }
                    offset += written
                }
                return true
            }
        }

        /// Closes the child's stdin (it reads its end).
        func closeInput() {
            lock.withLock {
                if let input, inputOpen { close(input) }
                inputOpen = false
            }
        }

        /// Both outputs (pipes) read to their ends at once, so neither fills up and blocks the child.
        func readOutputs() -> (stdout: Data, stderr: Data) {
            let collected = Collected()
            let errorPipe = errors
            Thread { collected.set(errorPipe.map(ChildProcess.readAll) ?? Data()) }.start()
            let data = output.map(ChildProcess.readAll) ?? Data()
            while !collected.isSet { usleep(1000) }
            return (data, collected.value)
        }

        /// Gathers what an output pipe delivers, as it comes, on a thread of its own.
        static func collect(_ fd: Int32?) -> Locked<Data> {
            let sink = Locked(Data())
            guard let fd else { return sink }
            Thread {
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = read(fd, &buffer, buffer.count)
                    if count < 0, errno == EINTR { continue }
                    if count <= 0 { close(fd); return }
                    sink.mutate { $0.append(buffer, count: count) }
                }
            }.start()
            return sink
        }

        deinit {
            closeInput()
            // Output pipes are closed by their readers' ends; a handle dropped while its child
            // runs leaves it to the test (which kills and reaps what it starts).
        }
    }

    /// Reads `fd` to its end, and closes it.
    fileprivate static func readAll(_ fd: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 { if errno == EINTR { continue }; break }
            if count == 0 { break }
            data.append(buffer, count: count)
        }
        close(fd)
        return data
    }

    /// `strings` as a NULL-terminated C array, for the duration of `body`.
    private static func withCStrings<T>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> T) -> T {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }

    /// Bytes set once by another thread.
    fileprivate final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        private var done = false
        func set(_ value: Data) { lock.withLock { data = value; done = true } }
        var isSet: Bool { lock.withLock { done } }
        var value: Data { lock.withLock { data } }
    }
}
