#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StorageGateway
import Synchronization

/// Draws a ``TransferProgress`` on stderr. On a terminal: a live block, like `rclone -P`: one line of
/// totals (bytes, rate, ETA, files) and one line per transfer in flight, redrawn in place; lines
/// the command prints meanwhile go above the block (``printAbove(_:)``). With --progress when
/// stderr is not a terminal: a plain totals line every 2 s.
final class ProgressRenderer: Sendable {
    private let progress: TransferProgress
    private let enabled: Bool
    private let live: Bool
    /// The drawing loop, while it runs.
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Lines of the block on screen now (0: nothing drawn); drawing and printing hold it.
    private let drawn = Mutex(0)
    /// The widest a line may be: a wrapped line would break redrawing in place.
    private let width: Int

    init(progress: TransferProgress, enabled: Bool) {
        self.progress = progress
        self.enabled = enabled
        live = enabled && isatty(STDERR_FILENO) == 1
        width = max(40, Self.terminalColumns() ?? Int(ProcessInfo.processInfo.environment["COLUMNS"] ?? "") ?? 80) - 1
        guard enabled else { return }
        let interval: Duration = live ? .milliseconds(250) : .seconds(2)
        task.withLock { $0 = Task.detached { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                redraw()
            }
        } }
    }

    /// Stops drawing and, if it drew, leaves the final totals line.
    func finish() {
        guard enabled, let running = task.withLock({ task -> Task<Void, Never>? in defer { task = nil }; return task }) else { return }
        running.cancel()
        let snapshot = progress.snapshot
        drawn.withLock { lines in
            let final = Self.totals(snapshot, naming: false)
            Self.write(Self.erase(lines) + (live ? Self.truncate(final, to: width) : final) + "\n")
            lines = 0
        }
    }

    /// Prints a line on stderr above the live block (or plainly when there is none).
    func printAbove(_ text: String) {
        guard live else {
            Self.write(text + "\n")
            return
        }
        let running = task.withLock { $0 != nil }
        drawn.withLock { lines in
            let block = running ? Self.block(progress.snapshot, width: width) : []
            Self.write(Self.erase(lines) + text + "\n" + block.joined(separator: "\n"))
            lines = block.count
        }
    }

    private func redraw() {
        guard live else {
            Self.write(Self.totals(progress.snapshot) + "\n")
            return
        }
        drawn.withLock { lines in
            guard task.withLock({ $0 != nil }) else { return }
            let block = Self.block(progress.snapshot, width: width)
            Self.write(Self.erase(lines) + block.joined(separator: "\n"))
            lines = block.count
        }
    }

    /// The totals line: `Transferred: 1.2 GiB / 4.0 GiB, 30%, 110.5 MiB/s, ETA 26s, files 3/10`.
    static func totals(_ snapshot: TransferProgress.Snapshot, naming: Bool = true) -> String {
        var text = "Transferred: \(Format.bytes(snapshot.completedBytes))"
        if let total = snapshot.totalBytes { text += " / \(Format.bytes(total))" }
        if let fraction = snapshot.fractionCompleted { text += ", \(Int(saturating: fraction * 100))%" }
        text += ", \(Format.bytes(Int64(saturating: snapshot.bytesPerSecond)))/s"
        if let eta = snapshot.estimatedTimeRemaining { text += ", ETA \(Format.duration(eta))" }
        if let files = snapshot.totalFiles { text += ", files \(snapshot.completedFiles)/\(files)" }
        if naming, snapshot.active.isEmpty, let item = snapshot.currentItem { text += ", \(item)" }
        return text
    }

    /// The live block: the totals, then `Transferring:` and one line per transfer in flight (at
    /// most 10, then `... and N more`), each cut to `width` columns.
    static func block(_ snapshot: TransferProgress.Snapshot, width: Int) -> [String] {
        var lines = [totals(snapshot)]
        if !snapshot.active.isEmpty {
            lines.append("Transferring:")
            for part in snapshot.active.prefix(10) {
                var figures = ""
                if let total = part.totalBytes, total > 0 {
                    figures = "\(Int(saturating: min(1, Double(part.completedBytes) / Double(total)) * 100))% /\(Format.bytes(total))"
                } else {
                    figures = Format.bytes(part.completedBytes)
                }
                figures += ", \(Format.bytes(Int64(saturating: part.bytesPerSecond)))/s"
                let room = max(8, width - figures.count - 6)
                lines.append(" * \(middleTruncated(TerminalText.escaped(part.name), to: room)): \(figures)")
            }
            if snapshot.active.count > 10 { lines.append(" ... and \(snapshot.active.count - 10) more") }
        }
        return lines.map { truncate($0, to: width) }
    }

    /// Moves the cursor back over a block of `lines` lines and clears it.
    static func erase(_ lines: Int) -> String {
        guard lines > 0 else { return "" }
        return "\r" + (lines > 1 ? "\u{1B}[\(lines - 1)A" : "") + "\u{1B}[J"
    }

    static func truncate(_ text: String, to width: Int) -> String {
        text.count <= width ? text : String(text.prefix(width))
    }

    /// `a very long/path/name.bin` cut in the middle: `a very…/name.bin`.
    static func middleTruncated(_ text: String, to width: Int) -> String {
        guard text.count > width, width > 3 else { return text }
        let tail = (width - 1) / 2
        return String(text.prefix(width - 1 - tail)) + "…" + String(text.suffix(tail))
    }

    /// The width of the terminal on stderr, when it is one.
    private static func terminalColumns() -> Int? {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    private static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
