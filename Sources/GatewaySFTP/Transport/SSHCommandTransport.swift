import Foundation
import GatewayCore
import Glibc
import Synchronization

/// An SFTP channel through the system's OpenSSH client, run as a child process as sshfs does
/// (`ssh ... -s HOST sftp`): for what the in-process channel cannot do (RSA keys, ssh-agent,
/// `~/.ssh/config`, ProxyJump). Its standard input and output carry the SFTP packets; the last
/// lines of its standard error explain a failure.
final class SSHCommandTransport: SFTPTransport {
    let inbound = InboundBytes()
    private let process: pid_t
    private let input: Int32
    private let writer: DispatchQueue
    private let stderrTail: StderrTail
    private let closed = Atomic<Bool>(false)

    /// The command and the options before the host, kept for ``run(_:limit:)``.
    private let command: String
    private let options: [String]
    private let host: String

    /// Starts `command` (shell words, e.g. `ssh -F ~/.ssh/config`) with `options`, then `-s HOST
    /// sftp`, through `/bin/sh`.
    init(command: String, options: [String], host: String) throws {
        self.command = command
        self.options = options
        self.host = host
        let spawned = try Self.spawn(command: command, arguments: options + ["-s", host, "sftp"])
        // A child that exits must not kill us with SIGPIPE on our next write.
        signal(SIGPIPE, SIG_IGN)
        process = spawned.pid
        let child = spawned.pid
        input = spawned.input
        writer = DispatchQueue(label: "gateway.sftp.ssh-command.writer")
        let tail = StderrTail()
        stderrTail = tail
        let inbound = self.inbound
        let output = spawned.output, errorOutput = spawned.errors
        Thread {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = read(errorOutput, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                tail.append(buffer[0..<count])
            }
            Glibc.close(errorOutput)
        }.start()
        Thread {
            var buffer = [UInt8](repeating: 0, count: 1 << 18)
            while true {
                let count = read(output, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                inbound.deliver(.bytes(Array(buffer[0..<count])))
            }
            Glibc.close(output)
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            let exit = (status & 0x7f) == 0 ? "exited with status \((status >> 8) & 0xff)" : "ended by signal \(status & 0x7f)"
            // Give the stderr reader a moment to take the child's last words.
            usleep(20_000)
            inbound.deliver(.end(SFTPClientError.sshCommandFailed(status: exit, stderr: tail.text)))
        }.start()
    }

    /// A child process started through `/bin/sh -c "exec COMMAND \"$@\""`: our arguments are passed
    /// as they are, the command's words are the shell's. Its three pipes are close-on-exec.
    static func spawn(command: String, arguments: [String]) throws -> (pid: pid_t, input: Int32, output: Int32, errors: Int32) {
        func makePipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard Glibc.pipe(&fds) == 0 else { throw SFTPClientError.sshCommandFailed(status: "could not start", stderr: "pipe: errno \(errno)") }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fds[0], fds[1])
        }
        let toChild = try makePipe(), fromChild = try makePipe(), errors = try makePipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild.read, 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
        let argv = ["/bin/sh", "-c", "exec \(command) \"$@\"", "sh"] + arguments
        let pointers = argv.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, pointers, environ)
        for fd in [toChild.read, fromChild.write, errors.write] { Glibc.close(fd) }
        guard spawned == 0 else {
            for fd in [toChild.write, fromChild.read, errors.read] { Glibc.close(fd) }
            throw SFTPClientError.sshCommandFailed(status: "could not start", stderr: "posix_spawn: errno \(spawned)")
        }
        return (pid, toChild.write, fromChild.read, errors.read)
    }

    /// Runs `command` on the server with a second `ssh` process (`ssh_command OPTIONS HOST
    /// COMMAND`): its exit status and the first `limit` bytes of its output. Killed after
    /// ``commandTimeout``.
    func run(_ remoteCommand: String, limit: Int) async throws -> (status: Int, output: [UInt8])? {
        let child = try Self.spawn(command: command, arguments: options + [host, remoteCommand])
        Glibc.close(child.input)
        let timeout = Double(commandTimeout.components.seconds)
        return await withCheckedContinuation { (continuation: CheckedContinuation<(status: Int, output: [UInt8])?, Never>) in
            Thread {
                let deadline = DispatchWorkItem { kill(child.pid, SIGKILL) }
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: deadline)
                var output: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = read(child.output, &buffer, buffer.count)
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    if output.count < limit { output += buffer[0..<min(count, limit - output.count)] }
                }
                Glibc.close(child.output)
                Glibc.close(child.errors)
                var status: Int32 = 0
                while waitpid(child.pid, &status, 0) < 0 && errno == EINTR {}
                deadline.cancel()
                let exit = (status & 0x7f) == 0 ? Int((status >> 8) & 0xff) : 128 + Int(status & 0x7f)
                continuation.resume(returning: (exit, output))
            }.start()
        }
    }

    /// Queues the packet for the writer thread and returns: callers bound what is in flight, and
    /// a failed write ends the inbound bytes, which fails every pending request.
    func send(_ packet: [UInt8]) async throws {
        guard !closed.load(ordering: .relaxed) else { throw SFTPClientError.connectionClosed(reason: "ssh_command was closed") }
        let fd = input, tail = stderrTail, inbound = inbound
        writer.async { [self] in
            guard !closed.load(ordering: .relaxed) else { return }
            if packet.withUnsafeBytes({ FileDescriptorIO.writeAll(fd, $0) }) != 0 {
                inbound.deliver(.end(SFTPClientError.sshCommandFailed(status: "stopped reading", stderr: tail.text)))
            }
        }
    }

    func close() async {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        let fd = input, pid = process
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            writer.async {
                // End of input ends the sftp session; the child exits and the reader reaps it.
                Glibc.close(fd)
                kill(pid, SIGTERM)
                continuation.resume()
            }
        }
    }
}

/// The last 2 KiB the child wrote to standard error.
final class StderrTail: Sendable {
    private let bytes = Mutex<[UInt8]>([])

    func append(_ chunk: ArraySlice<UInt8>) {
        bytes.withLock { bytes in
            bytes.append(contentsOf: chunk)
            if bytes.count > 2048 { bytes.removeFirst(bytes.count - 2048) }
        }
    }

    var text: String {
        let raw = String(decoding: bytes.withLock { $0 }, as: UTF8.self)
        return raw.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.suffix(3).joined(separator: "; ")
    }
}
