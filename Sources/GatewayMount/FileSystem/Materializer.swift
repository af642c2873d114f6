import Foundation
import GatewayCore
import GatewayState
import Logging
import Synchronization

/// Fetches pinned items into the mount's ``FileProviderCache`` in the background, one at a time:
/// right after a pin (a folder: every file under it), when the monitor reports a pinned item
/// created or changed on the remote, and after the mount uploads one. What fails is remembered
/// (``failures``) and tried again at the next reason to.
final class Materializer: Sendable {
    let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var queue: [String] = []
        var running = false
        var current: String?
        var fetched = 0
        var failures: [String: String] = [:]
    }

    /// What it is doing.
    struct Progress: Sendable {
        var queued: Int
        var current: String?
        var fetched: Int
        var failures: [String: String]
    }

    init(logger: Logger) {
        self.logger = logger
    }

    var progress: Progress {
        state.withLock { Progress(queued: $0.queue.count, current: $0.current, fetched: $0.fetched, failures: $0.failures) }
    }

    /// Fetches `path` (a file, or every file under a folder) if it is still pinned by then.
    func schedule(_ path: String, fileSystem: MountFileSystem) {
        let start = state.withLock { state -> Bool in
            if !state.queue.contains(path) { state.queue.append(path) }
            defer { state.running = true }
            return !state.running
        }
        guard start else { return }
        Task { await run(fileSystem: fileSystem) }
    }

    private func run(fileSystem: MountFileSystem) async {
        while let path = state.withLock({ state -> String? in
            guard !state.queue.isEmpty else {
                state.running = false
                state.current = nil
                return nil
            }
            state.current = state.queue.removeFirst()
            return state.current
        }) {
            do {
                try await fetch(path, fileSystem: fileSystem)
                state.withLock { _ = $0.failures.removeValue(forKey: path) }
            } catch {
                fileSystem.connectivity.noteFailure(error, fileSystem: fileSystem)
                logger.warning("a pinned item could not be fetched", metadata: ["path": .string(path), "error": .string("\(error)")])
                state.withLock { $0.failures[path] = ErrorMessage.reason(for: error) }
            }
        }
    }

    private func fetch(_ path: String, fileSystem: MountFileSystem) async throws {
        let cache = fileSystem.readCache
        // Offline: tried again when the remote is back (``MountFileSystem/cameOnline()``).
        try fileSystem.connectivity.requireOnline()
        guard cache.isPinned(path), let item = try await fileSystem.provider.itemIfPresent(path: path) else { return }
        guard item.isDirectory else { return try await fetchFile(item, fileSystem: fileSystem) }
        for try await child in fileSystem.provider.walk(path: path) where child.type == .file && cache.isPinned(child.path) {
            try await fetchFile(child, fileSystem: fileSystem)
        }
    }

    private func fetchFile(_ item: FileObject, fileSystem: MountFileSystem) async throws {
        // Written through the mount and not uploaded yet: its contents are here already.
        if let inode = fileSystem.table.withLock({ $0.resolve(item.path)?.inode }), fileSystem.dirty.withLock({ $0[inode] }) != nil { return }
        let generation = fileSystem.generation(of: item.path)
        guard let key = FileProviderCache.Key(item, generation: generation) else { return }
        if fileSystem.readCache.state(of: key) != .materialized {
            try await fileSystem.readCache.materialize(item, generation: generation, from: fileSystem.provider)
            state.withLock { $0.fetched += 1 }
        }
        fileSystem.readCache.dropOtherVersions(of: item.path, keeping: key)
    }
}
