import Foundation
import GatewayCore
import Logging
import Synchronization

/// Sends dirty files to the remote: `delay` after their last close (a program that closes and
/// reopens a file, as editors and build tools do, uploads once), at once on `fsync`, and all that
/// remain when the mount ends (``drain(fileSystem:)``). A failed upload is tried again with
/// back-off; the file stays in the cache meanwhile.
final class Uploader: Sendable {
    let delay: Duration
    let logger: Logger
    private let pending = Mutex<[UInt64: Task<Void, Never>]>([:])

    init(delay: Duration, logger: Logger) {
        self.delay = delay
        self.logger = logger
    }

    /// Uploads `file` after the write-back delay (restarting it if one was waiting).
    func schedule(_ file: DirtyFile, fileSystem: MountFileSystem) {
        guard file.isModified else {
            fileSystem.forgetDirty(file)
            return
        }
        fileSystem.enqueue(file)
        let delay = self.delay
        let task = Task { [self] in
            if delay > .zero { try? await Task.sleep(for: delay) }
            guard !Task.isCancelled else { return }
            // The upload itself runs in a task of its own: a later close cancels the wait above,
            // never an upload under way (a write meanwhile makes it go again).
            await Task { await uploadRetrying(file, fileSystem: fileSystem) }.value
        }
        pending.withLock { pending in
            pending[file.inode]?.cancel()
            pending[file.inode] = task
        }
    }

    /// Uploads `file` now and waits (`fsync`).
    func uploadNow(_ file: DirtyFile, fileSystem: MountFileSystem) async throws {
        pending.withLock { $0.removeValue(forKey: file.inode)?.cancel() }
        try await fileSystem.upload(file)
    }

    /// How many uploads the end of a mount runs at once.
    static let drainWidth = 4

    /// Uploads every dirty file without waiting for the delay, a few at a time, and waits for all
    /// (the mount ends). Returns how many could not be sent.
    func drain(fileSystem: MountFileSystem) async -> Int {
        let waiting = pending.withLock { pending -> [Task<Void, Never>] in
            let tasks = Array(pending.values)
            pending.removeAll()
            return tasks
        }
        for task in waiting { task.cancel() }
        let files = fileSystem.dirty.withLock { Array($0.values) }.filter(\.isModified)
        return await withTaskGroup(of: Bool.self) { group in
            var failed = 0
            var next = 0
            func add() {
                guard next < files.count else { return }
                let file = files[next]
                next += 1
                group.addTask { [self] in
                    do {
                        try await fileSystem.upload(file)
                        return true
                    } catch {
                        let path = fileSystem.table.withLock { $0.path(of: file.inode) } ?? file.cachePath
                        logger.error("upload failed", metadata: ["path": .string(path), "error": .string("\(error)")])
                        fileSystem.options.events?(.uploadFailed(path: path, error: "\(error)", willRetry: false))
                        return false
                    }
                }
            }
            for _ in 0..<Self.drainWidth { add() }
            while let sent = await group.next() {
                if !sent { failed += 1 }
                add()
            }
            return failed
        }
    }

    /// How many files wait for an upload.
    func count(fileSystem: MountFileSystem) -> Int {
        fileSystem.dirty.withLock { $0.values.filter(\.isModified).count }
    }

    private func uploadRetrying(_ file: DirtyFile, fileSystem: MountFileSystem) async {
        var wait = Duration.seconds(1)
        while !Task.isCancelled {
            // Offline: the upload waits for the remote, and goes as soon as it answers.
            await fileSystem.connectivity.waitUntilOnline()
            do {
                try await fileSystem.upload(file)
                pending.withLock { pending in
                    if pending[file.inode] != nil { pending[file.inode] = nil }
                }
                return
            } catch {
                fileSystem.connectivity.noteFailure(error, fileSystem: fileSystem)
                if !fileSystem.connectivity.isOnline { continue }
                logger.warning("upload failed; trying again", metadata: ["error": .string("\(error)"), "in": .stringConvertible(wait)])
                if let path = fileSystem.table.withLock({ $0.path(of: file.inode) }) {
                    fileSystem.options.events?(.uploadFailed(path: path, error: "\(error)", willRetry: true))
                }
                try? await Task.sleep(for: wait)
                wait = min(wait * 2, .seconds(60))
            }
        }
    }
}
