import ArgumentParser
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Process entry: parses arguments, runs the command in a cancellable task (Ctrl-C cancels it so
/// temporary files are cleaned up), and maps every outcome to the documented exit codes:
/// 0 success, 1 operation failed, 2 usage or configuration error, 3 a plan changed or invalid,
/// 130 interrupted.
@main
enum Entry {
    static func main() async {
        #if canImport(Glibc)
        // Transfers allocate buffers of megabytes (upload parts, read-ahead) on many threads.
        // glibc's dynamic mmap threshold rises to the largest block freed (up to 32 MiB), after
        // which such buffers come from per-thread arenas that seldom give memory back: a 1 GiB S3
        // upload peaked at 160 MB instead of 110 MB. A fixed threshold keeps them mmapped and
        // returned on free.
        // (malloc.h is not in Swift's Glibc module: mallopt is looked up; M_MMAP_THRESHOLD is -3.)
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") {
            let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
            _ = mallopt(-3, 1 << 20)
        }
        #endif
        let arguments = GlobalOptions.hoistingGlobalOptions(Array(CommandLine.arguments.dropFirst()))
        let task = Task { () -> Int32 in
            do {
                var command = try GatewayCommand.parseAsRoot(arguments)
                if var asyncCommand = command as? any AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
                return 0
            } catch {
                return Task.isCancelled ? 130 : report(error)
            }
        }
        let interrupt = InterruptHandler { task.cancel() }
        let code = await task.value
        interrupt.stop()
        if code == 130 { FileHandle.standardError.write(Data("gateway: interrupted\n".utf8)) }
        exit(code)
    }

    /// Prints what ArgumentParser has to say about an error and returns the exit code.
    static func report(_ error: any Error) -> Int32 {
        let code = GatewayCommand.exitCode(for: error).rawValue
        let message = GatewayCommand.fullMessage(for: error)
        if !message.isEmpty {
            let handle = code == 0 ? FileHandle.standardOutput : FileHandle.standardError
            handle.write(Data((message + "\n").utf8))
        }
        switch code {
        case 0, 1, 2, 3, 130: return code
        case ExitCode.validationFailure.rawValue: return 2
        default: return 1
        }
    }
}

/// Cancels the running command on the first SIGINT/SIGTERM, and exits at once on a second
/// (after ``onSecondInterrupt``, where a command set one: `mount` says what it had still to do).
final class InterruptHandler {
    private let sources: [any DispatchSourceSignal]
    private static let second = Mutex<(@Sendable () -> Void)?>(nil)
    private static let count = Mutex(0)

    /// Runs `body` on a second SIGINT/SIGTERM, just before the process exits with 130.
    static func onSecondInterrupt(_ body: @escaping @Sendable () -> Void) {
        second.withLock { $0 = body }
    }

    init(onInterrupt: @escaping @Sendable () -> Void) {
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                let count = Self.count.withLock { count -> Int in
                    count += 1
                    return count
                }
                guard count == 1 else {
                    Self.second.withLock { $0 }?()
                    exit(130)
                }
                if Self.second.withLock({ $0 }) == nil { signal(signalNumber, SIG_DFL) }
                onInterrupt()
            }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    func stop() {
        for source in sources { source.cancel() }
    }
}
