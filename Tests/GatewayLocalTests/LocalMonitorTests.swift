import Foundation
import GatewayLocal
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// inotify-specific monitoring on the local file system: bursts, queue overflows, folders filled
/// at once, coalescing, and the watch limit.
@Suite("Local change monitoring (inotify)", .serialized)
struct LocalMonitorTests {
    /// A live stream over a fresh local folder, collecting what it sees.
    struct Watch {
        let root: String
        let provider: LocalFileProvider
        let collected: Locked<[SeenChange]>
        /// How many events of the probe file (``probe``, left out of ``collected``) came.
        let probes: Locked<Int>
        let task: Task<Void, any Error>
        let cleanup: @Sendable () -> Void
        static let probe = ".watch-probe"

        /// Starts a stream and returns once it watches (it has reported a probe written after it started).
        static func start() async throws -> Watch {
            let root = try TemporaryFolder.make()
            let state = try TemporaryFolder.make(prefix: "gateway-state")
            let provider = try LocalFileProvider(name: "watched", root: root.path, stateDirectory: URL(fileURLWithPath: state.path))
            let collected = Locked<[SeenChange]>([])
            let probes = Locked(0)
            let stream = provider.changes(at: "/", options: MonitorOptions(recursive: true))
            let task = Task {
                for try await event in stream {
                    let change = SeenChange(event, base: "")
                    if change.path == Watch.probe { probes.mutate { $0 += 1 } } else { collected.mutate { $0.append(change) } }
                }
            }
            let watch = Watch(root: provider.rootPath, provider: provider, collected: collected, probes: probes, task: task,
                              cleanup: { root.remove(); state.remove() })
            try await watch.barrier()
            return watch
        }

        /// Returns once every event of a change made before the call has come: the stream reports
        /// in order, so a probe written now and reported marks that point (rather than a pause of
        /// fixed length that a loaded machine may outlast).
        func barrier(timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let before = probes.value
            let seen = try await probeUntilSeen(timeout: timeout, write: { round in
                try Data(repeating: 0x70, count: round + before).write(to: URL(fileURLWithPath: root + "/" + Self.probe))
            }, seen: { probes.value > before })
            guard seen else {
                Issue.record("the stream never reported the probe within \(timeout)", sourceLocation: sourceLocation)
                throw CancellationError()
            }
        }

        init(root: String, provider: LocalFileProvider, collected: Locked<[SeenChange]>, probes: Locked<Int>, task: Task<Void, any Error>,
             cleanup: @escaping @Sendable () -> Void) {
            self.root = root
            self.provider = provider
            self.collected = collected
            self.probes = probes
            self.task = task
            self.cleanup = cleanup
        }

        func stop() async {
            task.cancel()
            _ = try? await task.value
            cleanup()
        }
    }

    @Test("a burst of 10,000 files created at once yields 10,000 created events, none lost or repeated")
    func burst() async throws {
        let watch = try await Watch.start()
        for index in 0..<10_000 {
            try create(watch.root + "/f\(index).txt", Data("\(index)".utf8))
        }
        try await waitFor(watch.collected, timeout: .seconds(60)) { $0.filter { $0.kind == .created }.count >= 10_000 }
        try await watch.barrier()  // any repeated event would have come by now
        expectCreations(watch.collected.value, (0..<10_000).map { "f\($0).txt" })
        await watch.stop()
    }

    @Test("a kernel queue overflow is followed by a comparison that reports the same set")
    func overflow() async throws {
        // The reader holds off while more files are made than the kernel queues events for
        // (fs.inotify.max_queued_events, 16,384 by default): the queue overflows at the machine's
        // own limit. (Lowering that limit instead would give a queue of one event to every inotify
        // instance any program made meanwhile, tests in the other shard among them.)
        let limit = Int(try String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 16_384
        try #require(limit <= 200_000, "fs.inotify.max_queued_events is \(limit): too many files to overflow it here")
        let count = limit + 1_000
        let watch = try await Watch.start()
        let overflowsBefore = InotifyStatistics.overflows.load(ordering: .relaxed)
        InotifyStatistics.readingHeld.store(true, ordering: .relaxed)
        do {
            // In the watched folder itself (a new folder would get its watch only once the held
            // reader read of it): three events a file (create, modify, close).
            for index in 0..<count {
                try create(watch.root + "/g\(index)", Data([1, 2, 3]))
            }
        } catch {
            InotifyStatistics.readingHeld.store(false, ordering: .relaxed)
            throw error
        }
        InotifyStatistics.readingHeld.store(false, ordering: .relaxed)
        try await waitFor(watch.collected, timeout: .seconds(120)) { $0.filter { $0.kind == .created }.count >= count }
        try await watch.barrier()
        expectCreations(watch.collected.value, (0..<count).map { "g\($0)" })
        #expect(InotifyStatistics.overflows.load(ordering: .relaxed) > overflowsBefore, "the queue must have overflowed for this test to mean anything")
        await watch.stop()
    }

    @Test("a folder created and filled at once is fully reported, parents first")
    func folderFilledAtOnce() async throws {
        let watch = try await Watch.start()
        try FileManager.default.createDirectory(atPath: watch.root + "/a/b/c", withIntermediateDirectories: true)
        for name in ["a/1", "a/b/2", "a/b/c/3"] {
            try create(watch.root + "/" + name, Data(name.utf8))
        }
        let expected = ["a", "a/b", "a/b/c", "a/1", "a/b/2", "a/b/c/3"].map { SeenChange(.created, $0) }
        try await waitFor(watch.collected, timeout: .seconds(5)) { Set($0).isSuperset(of: expected) }
        // Changes inside the new folders are watched from then on.
        try create(watch.root + "/a/b/c/4", Data())
        try await waitFor(watch.collected, timeout: .seconds(5)) { $0.contains(SeenChange(.created, "a/b/c/4")) }
        let changes = watch.collected.value
        #expect(changes.firstIndex(of: SeenChange(.created, "a/b"))! < changes.firstIndex(of: SeenChange(.created, "a/b/2"))!)
        #expect(changes.count == 7, "\(changes)")
        await watch.stop()
    }

    @Test("a file written in 100 pieces is one event; renames of files and folders are renames")
    func coalescingAndRenames() async throws {
        let watch = try await Watch.start()
        try create(watch.root + "/log.txt", Data())
        try await waitFor(watch.collected, timeout: .seconds(5)) { $0.contains(SeenChange(.created, "log.txt")) }
        let handle = try #require(FileHandle(forWritingAtPath: watch.root + "/log.txt"))
        for piece in 0..<100 { handle.write(Data("piece \(piece)\n".utf8)) }
        try handle.close()
        try await waitFor(watch.collected, timeout: .seconds(5)) { $0.contains(SeenChange(.modified, "log.txt")) }
        try await watch.barrier()
        #expect(watch.collected.value.filter { $0.path == "log.txt" }.count == 2, "\(watch.collected.value)")

        try FileManager.default.createDirectory(atPath: watch.root + "/dir/sub", withIntermediateDirectories: true)
        try await waitFor(watch.collected, timeout: .seconds(5)) { $0.contains(SeenChange(.created, "dir/sub")) }
        try FileManager.default.moveItem(atPath: watch.root + "/dir", toPath: watch.root + "/moved")
        try FileManager.default.moveItem(atPath: watch.root + "/log.txt", toPath: watch.root + "/moved/log.txt")
        try await waitFor(watch.collected, timeout: .seconds(5)) {
            $0.contains(SeenChange(.renamed, "moved", from: "dir")) && $0.contains(SeenChange(.renamed, "moved/log.txt", from: "log.txt"))
        }
        // The moved folder is still watched under its new name.
        try create(watch.root + "/moved/sub/new", Data())
        try await waitFor(watch.collected, timeout: .seconds(5)) { $0.contains(SeenChange(.created, "moved/sub/new")) }
        await watch.stop()
    }

    /// A local folder with a provider on a private state folder, for anchor tests.
    static func scratch() throws -> (LocalFileProvider, String, @Sendable () -> Void) {
        let root = try TemporaryFolder.make()
        let state = try TemporaryFolder.make(prefix: "gateway-state")
        let provider = try LocalFileProvider(name: "watched", root: root.path, stateDirectory: URL(fileURLWithPath: state.path))
        return (provider, provider.rootPath, { root.remove(); state.remove() })
    }

    @Test("renaming a folder with non-ASCII names keeps its subtree whole (no spurious events after)")
    func nonASCIIFolderRename() async throws {
        let (provider, root, cleanup) = try Self.scratch()
        defer { cleanup() }
        try FileManager.default.createDirectory(atPath: root + "/café/sub", withIntermediateDirectories: true)
        try create(root + "/café/sub/file", Data("f".utf8))
        let anchor = try await provider.currentAnchor(at: "/", recursive: true)
        try FileManager.default.moveItem(atPath: root + "/café", toPath: root + "/thé")
        let first = try await MonitorChecks.catchUp(provider, since: anchor, base: "")
        #expect(first.changes == [SeenChange(.renamed, "thé", from: "café")])
        try create(root + "/thé/sub/new", Data("n".utf8))
        let second = try await MonitorChecks.catchUp(provider, since: first.anchor, base: "")
        #expect(second.changes == [SeenChange(.created, "thé/sub/new")], "\(second.changes)")
    }

    @Test("names that differ only in Unicode form are two items, reported once each")
    func unicodeForms() async throws {
        let (provider, root, cleanup) = try Self.scratch()
        defer { cleanup() }
        let anchor = try await provider.currentAnchor(at: "/", recursive: true)
        let composed = "caf\u{e9}", decomposed = "cafe\u{301}"
        try create(root + "/" + composed, Data("1".utf8))
        try create(root + "/" + decomposed, Data("22".utf8))
        let first = try await MonitorChecks.catchUp(provider, since: anchor, base: "")
        #expect(first.changes.count == 2, "\(first.changes)")
        let second = try await MonitorChecks.catchUp(provider, since: first.anchor, base: "")
        #expect(second.changes.isEmpty, "\(second.changes)")
    }

    @Test("catch-up from an old anchor, then live: folders are watched even though the log served the catch-up")
    func liveAfterLoggedCatchUp() async throws {
        let (provider, root, cleanup) = try Self.scratch()
        defer { cleanup() }
        try FileManager.default.createDirectory(atPath: root + "/d", withIntermediateDirectories: false)
        let old = try await provider.currentAnchor(at: "/", recursive: true)
        try create(root + "/d/x", Data("x".utf8))
        _ = try await provider.currentAnchor(at: "/", recursive: true)  // logs d/x: the old anchor is now behind
        let collected = Locked<[SeenChange]>([])
        let caughtUp = Locked(false)
        let pages = provider.changePages(since: old, options: MonitorOptions(recursive: true))
        let task = Task {
            for try await page in pages {
                collected.mutate { $0 += page.events.map { SeenChange($0, base: "") } }
                if !page.moreComing { caughtUp.mutate { $0 = true } }
            }
        }
        defer { task.cancel() }
        try await waitFor(collected, timeout: .seconds(3)) { $0.contains(SeenChange(.created, "d/x")) }
        // Live from the last catch-up page on: a change after it is seen.
        try await waitUntil("the catch-up's end") { caughtUp.value }
        try create(root + "/d/y", Data("y".utf8))
        try await waitFor(collected, timeout: .seconds(3)) { $0.contains(SeenChange(.created, "d/y")) }
    }

    @Test("live: a folder removed and made again is watched again; moved and changed is a removal and a creation; moved into a new folder is renamed")
    func remadeFoldersAndMoves() async throws {
        let watch = try await Watch.start()
        try FileManager.default.createDirectory(atPath: watch.root + "/a", withIntermediateDirectories: false)
        try create(watch.root + "/one.txt", Data("1".utf8))
        try await waitFor(watch.collected, timeout: .seconds(3)) { $0.contains(SeenChange(.created, "one.txt")) }
        try FileManager.default.removeItem(atPath: watch.root + "/a")
        try FileManager.default.createDirectory(atPath: watch.root + "/a", withIntermediateDirectories: false)
        // Taken in by the stream (a removal and a making of the same empty folder report nothing)
        // before a file goes in: the file is then seen only if the new folder is watched.
        try await watch.barrier()
        try create(watch.root + "/a/f", Data("f".utf8))
        try await waitFor(watch.collected, timeout: .seconds(3)) { $0.contains(SeenChange(.created, "a/f")) }

        try FileManager.default.moveItem(atPath: watch.root + "/one.txt", toPath: watch.root + "/two.txt")
        let handle = try #require(FileHandle(forWritingAtPath: watch.root + "/two.txt"))
        try handle.seekToEnd()
        handle.write(Data("more".utf8))
        try handle.close()
        try await waitFor(watch.collected, timeout: .seconds(3)) {
            $0.contains(SeenChange(.removed, "one.txt")) && $0.contains(SeenChange(.created, "two.txt"))
        }
        try FileManager.default.moveItem(atPath: watch.root + "/two.txt", toPath: watch.root + "/three.txt")
        try await waitFor(watch.collected, timeout: .seconds(3)) { $0.contains(SeenChange(.renamed, "three.txt", from: "two.txt")) }

        try FileManager.default.createDirectory(atPath: watch.root + "/new", withIntermediateDirectories: false)
        try FileManager.default.moveItem(atPath: watch.root + "/three.txt", toPath: watch.root + "/new/three.txt")
        try await waitFor(watch.collected, timeout: .seconds(3)) {
            $0.contains(SeenChange(.created, "new")) && $0.contains(SeenChange(.renamed, "new/three.txt", from: "three.txt"))
        }
        await watch.stop()
    }
}
