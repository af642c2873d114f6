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

    /// Runs `executable` with `arguments` in `directory`; `stdin` is written and closed (none:
    /// `/dev/null`). Both outputs are read at once, so neither can fill up and block the child.
    /// The status is the exit code, or the signal's number when a signal ended it (as `Process`).
    static func run(_ executable: String, _ arguments: [String], environment: [String: String], directory: String? = nil,
                    stdin: Data? = nil) throws -> Output {
        // Close-on-exec: a program spawned by another thread inherits none of them (pipe2 isn't
        // in Swift's Glibc module; the moment between pipe and fcntl is the only window).
        func makePipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard Glibc.pipe(&fds) == 0 else { throw SpawnError(description: "pipe: errno \(errno)") }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fds[0], fds[1])
        }
        let out = try makePipe(), err = try makePipe(), input = try makePipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if stdin == nil {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        } else {
            posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, out.write, 1)
        posix_spawn_file_actions_adddup2(&actions, err.write, 2)
        // The working folder through the shell (posix_spawn has no portable chdir action).
        var argv = [executable] + arguments
        var program = executable
        if let directory {
            program = "/bin/sh"
            argv = ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, directory] + argv
        }
        let environmentLines = environment.map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let spawned = withCStrings(argv) { argvPointers in
            withCStrings(environmentLines) { environmentPointers in
                posix_spawn(&pid, program, &actions, nil, argvPointers, environmentPointers)
            }
        }
        for fd in [out.write, err.write, input.read] { close(fd) }
        guard spawned == 0 else {
            for fd in [out.read, err.read, input.write] { close(fd) }
            throw SpawnError(description: "posix_spawn \(program): errno \(spawned)")
        }
        if let stdin {
            // A child that exits before reading all of it must not kill the test run.
            signal(SIGPIPE, SIG_IGN)
            stdin.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(input.write, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 { if errno == EINTR { continue }; break }
                    offset += written
                }
            }
        }
        close(input.write)
        let errors = Collected()
        let errorPipe = err.read
        Thread { errors.set(readAll(errorPipe)) }.start()
        let output = readAll(out.read)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // The stderr reader ends at the pipe's end, which came with the child's exit.
        while !errors.isSet { usleep(1000) }
        close(out.read)
        close(err.read)
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : status & 0x7f
        return Output(status: code, stdout: output, stderr: errors.value)
    }

    /// Reads `fd` to its end.
    private static func readAll(_ fd: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 { if errno == EINTR { continue }; break }
            if count == 0 { break }
            data.append(buffer, count: count)
        }
        return data
    }

    /// `strings` as a NULL-terminated C array, for the duration of `body`.
    private static func withCStrings<T>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> T) -> T {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }

    /// Bytes set once by another thread.
    private final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        private var done = false
        func set(_ value: Data) { lock.withLock { data = value; done = true } }
        var isSet: Bool { lock.withLock { done } }
        var value: Data { lock.withLock { data } }
    }
}
