import ArgumentParser
import Foundation
import StorageGateway

struct CatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cat",
        abstract: "Write a file (or a byte range of it) to standard output, streamed.",
        discussion: HelpText.reflow("""
        Examples:
          gateway cat docs:notes.txt
          gateway cat --offset 1048576 --count 4096 docs:big.bin | xxd
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "First byte to write (0-based).") var offset: Int64 = 0
    @Option(help: "Number of bytes to write (default: to the end).") var count: Int64?
    @Argument(help: "REMOTE:PATH or a local path.") var location: String

    func validate() throws {
        if offset < 0 { throw ValidationError("--offset must be 0 or more") }
        if let count, count < 0 { throw ValidationError("--count must be 0 or more") }
    }

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "cat")
        let reader = try context.capability((any FileProviderReadWrite).self, of: provider, operation: "cat", location: target)
        try await context.perform("cat", target) {
            let stream = try await reader.readStream(path: target.path, offset: offset, length: count)
            for try await chunk in stream { StandardOutput.writeRaw(chunk) }
        }
    }
}

struct RcatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rcat",
        abstract: "Write standard input to a file, streamed and atomically.",
        discussion: HelpText.reflow("""
        Nothing appears under the name unless all of standard input was stored. A file it replaces
        goes to the remote's trash in the instant before (`gateway undo` puts it back), unless
        --no-trash.

        Example:
          tar c photos | gateway rcat backup:photos.tar
        """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var trash: TrashFlags
    @Argument(help: "REMOTE:PATH or a local path.") var location: String

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "rcat")
        let journal = JournalRecorder(context: context)
        journal.register(provider, location: target)
        defer { journal.finish() }
        let writer = try context.capability((any FileProviderReadWrite).self, of: provider, operation: "rcat", location: target)
        let progress = TransferProgress()
        let renderer = ProgressRenderer(progress: progress, enabled: context.showsProgress)
        defer { renderer.finish() }
        try await context.perform("rcat", target) {
            let input = ByteStream(expectedLength: nil) { try await StandardInput.read(chunk: 1 << 20) }
            let options = WriteOptions(overwrite: true, atomically: true, progress: progress)
            if let undoable = writer as? any FileProviderUndoable {
                let (_, record) = try await undoable.writeUndoably(path: target.path, from: input, options: options, useTrash: !trash.noTrash)
                journal.record(record, on: provider)
            } else {
                _ = try await writer.write(path: target.path, from: input, options: options)
            }
        }
    }
}

/// Reads of standard input, one chunk at a time, that notice cancellation (Ctrl-C) even while
/// no input arrives: the descriptor is polled in short slices.
enum StandardInput {
    static func read(chunk: Int) async throws -> Data? {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        while true {
            try Task.checkCancellation()
            let ready = poll(&descriptor, 1, 100)
            if ready > 0 { break }
            if ready < 0 && errno != EINTR { throw CocoaError.posix(errno, path: "<stdin>") }
        }
        var data = Data(count: chunk)
        let count = data.withUnsafeMutableBytes { buffer -> Int in
            var result: Int
            repeat { result = Glibc.read(STDIN_FILENO, buffer.baseAddress, chunk) } while result < 0 && errno == EINTR
            return result
        }
        if count < 0 { throw CocoaError.posix(errno, path: "<stdin>") }
        if count == 0 { return nil }
        data.count = count
        return data
    }
}
