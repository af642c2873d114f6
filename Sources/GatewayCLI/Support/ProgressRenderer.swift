import Foundation
import StorageGateway

/// Draws a ``TransferProgress`` on stderr: a live line on a terminal, periodic plain lines when
/// --progress is given and stderr is not a terminal.
final class ProgressRenderer: Sendable {
    private let progress: TransferProgress
    private let task: Task<Void, Never>?
    private let live: Bool

    init(progress: TransferProgress, enabled: Bool) {
        self.progress = progress
        let live = isatty(STDERR_FILENO) == 1
        self.live = live
        guard enabled else {
            task = nil
            return
        }
        task = Task.detached { [progress] in
            let interval: Duration = live ? .milliseconds(250) : .seconds(2)
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                Self.draw(progress.snapshot, live: live)
            }
        }
    }

    /// Stops drawing and, if it drew, finishes with a final line.
    func finish() {
        guard let task else { return }
        task.cancel()
        Self.draw(progress.snapshot, live: live)
        if live { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    static func line(_ snapshot: TransferProgress.Snapshot) -> String {
        var text = "Transferred: \(Format.bytes(snapshot.completedBytes))"
        if let total = snapshot.totalBytes { text += " / \(Format.bytes(total))" }
        if let fraction = snapshot.fractionCompleted { text += ", \(Int(fraction * 100))%" }
        text += ", \(Format.bytes(Int64(snapshot.bytesPerSecond)))/s"
        if let eta = snapshot.estimatedTimeRemaining { text += ", ETA \(Format.duration(eta))" }
        if let files = snapshot.totalFiles { text += ", files \(snapshot.completedFiles)/\(files)" }
        if let item = snapshot.currentItem { text += ", \(item)" }
        return text
    }

    private static func draw(_ snapshot: TransferProgress.Snapshot, live: Bool) {
        let text = line(snapshot)
        FileHandle.standardError.write(Data((live ? "\r\u{1B}[K" + text : text + "\n").utf8))
    }
}
