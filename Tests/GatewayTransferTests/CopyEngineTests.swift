import Foundation
@testable import GatewayTestSupport
import StorageGateway
@testable import GatewayTransfer
import Testing

/// A source and a destination for engine runs: every provider copies to and from Local.
struct EnginePair: Sendable, CustomTestStringConvertible {
    let source: ProviderFixture
    let destination: ProviderFixture
    var testDescription: String { "\(source.name) -> \(destination.name)" }

    static let all: [EnginePair] = [
        EnginePair(source: .local, destination: .local),
        EnginePair(source: .local, destination: .webdavApache),
        EnginePair(source: .webdavRclone, destination: .local),
        EnginePair(source: .webdavApache, destination: .webdavRclone),
        EnginePair(source: .local, destination: .ftpVsftpd),
        EnginePair(source: .ftpPyftpdlib, destination: .local),
        EnginePair(source: .webdavApache, destination: .ftpVsftpdTLS),
        EnginePair(source: .ftpVsftpd, destination: .ftpPyftpdlib),
    ]

    func run(_ body: (ProviderScratch, ProviderScratch) async throws -> Void) async throws {
        try await source.run { from in
            try await destination.run { to in try await body(from, to) }
        }
    }
}

@Suite("Copy engine")
struct CopyEngineTests {
    static let names = ["a b.txt", "naïve café.txt", "#hash", "100%", "what?.txt", ".hidden", "🚀"]

    /// Builds a tree on `s` under `src`; returns relative path -> contents of every file.
    func makeTree(_ s: ProviderScratch) async throws -> [String: Data] {
        var files: [String: Data] = [:]
        try await s.provider.createFolder(path: s.path("src/sub dir/deeper"), withIntermediateDirectories: true)
        try await s.provider.createFolder(path: s.path("src/empty/also empty"), withIntermediateDirectories: true)
        for (index, name) in Self.names.enumerated() { files[name] = Data("file \(index)".utf8) }
        files["sub dir/zero"] = Data()
        files["sub dir/deeper/big.bin"] = Bytes.pattern(2_500_000, seed: 3)
        for index in 0..<30 { files["sub dir/many-\(index)"] = Bytes.pattern(100 + index, seed: UInt64(index)) }
        for (path, data) in files { try await s.provider.writeContents(path: s.path("src/" + path), data: data) }
        return files
    }

    /// Every file below `path` as relative path -> contents, plus every folder.
    func snapshot(_ s: ProviderScratch, _ path: String) async throws -> (files: [String: Data], folders: Set<String>) {
        var files: [String: Data] = [:]
        var folders: Set<String> = []
        for try await item in s.provider.walk(path: s.path(path)) {
            let relative = RemotePath.relative(item.path, to: s.path(path))!
            if item.isDirectory { folders.insert(relative) } else { files[relative] = try await s.provider.contents(path: item.path) }
        }
        return (files, folders)
    }

    @Test("copy: byte-equal tree with empty folders; a second run skips everything", arguments: EnginePair.all)
    func copyAndSkip(pair: EnginePair) async throws {
        try await pair.run { from, to in
            let files = try await makeTree(from)
            let engine = CopyEngine(options: CopyOptions(transfers: 3, checkers: 4))
            let source = TransferEndpoint(provider: from.provider, path: from.path("src"))
            let destination = TransferEndpoint(provider: to.provider, path: to.path("dst"))
            let progress = TransferProgress()
            let log = EventLog()
            let first = try await engine.run(.copy, from: source, to: destination, progress: progress, onEvent: log.record)
            #expect(first.failed == 0, "failures: \(log.failures)")
            // Folders created are reported by their relative paths; the destination root is not "".
            let created = log.all.compactMap { if case .createdFolder(let path) = $0 { path } else { nil } }
            #expect(!created.contains("") && created.contains("sub dir/deeper"), "\(created)")
            #expect(first.copied == files.count)
            #expect(first.bytes == files.values.reduce(0) { $0 + Int64($1.count) })
            #expect(progress.snapshot.completedFiles == files.count)
            let copied = try await snapshot(to, "dst")
            #expect(copied.files == files)
            #expect(copied.folders.isSuperset(of: ["empty", "empty/also empty", "sub dir", "sub dir/deeper"]))

            let second = try await engine.run(.copy, from: source, to: destination)
            #expect(second.copied == 0)
            #expect(second.skipped == files.count)

            // A changed file (new size) is copied again, and only that one.
            try await from.provider.writeContents(path: from.path("src/a b.txt"), data: Data("changed!".utf8))
            let third = try await engine.run(.copy, from: source, to: destination)
            #expect(third.copied == 1)
            #expect(try await to.provider.contents(path: to.path("dst/a b.txt")) == Data("changed!".utf8))
        }
    }

    @Test("dry run changes nothing and reports what it would do", arguments: [EnginePair.all[0], EnginePair.all[1]])
    func dryRun(pair: EnginePair) async throws {
        try await pair.run { from, to in
            let files = try await makeTree(from)
            let actions = EventLog()
            let summary = try await CopyEngine(options: CopyOptions(dryRun: true)).run(
                .sync, from: TransferEndpoint(provider: from.provider, path: from.path("src")),
                to: TransferEndpoint(provider: to.provider, path: to.path("dst")), onEvent: actions.record)
            #expect(summary.dryRun)
            #expect(summary.failed == 0)
            #expect(actions.wouldDo.filter { $0.action == .copy }.count == files.count)
            await expectFailure(.notFound) { _ = try await to.provider.attributesOfItem(path: to.path("dst")) }
        }
    }

    @Test("sync deletes extras after a clean run, and deletes nothing when anything failed", arguments: [EnginePair.all[0], EnginePair.all[1], EnginePair.all[4]])
    func sync(pair: EnginePair) async throws {
        try await pair.run { from, to in
            let files = try await makeTree(from)
            let source = TransferEndpoint(provider: from.provider, path: from.path("src"))
            let destination = TransferEndpoint(provider: to.provider, path: to.path("dst"))
            _ = try await CopyEngine().run(.copy, from: source, to: destination)
            try await to.provider.writeContents(path: to.path("dst/extra.txt"), data: Data("x".utf8))
            try await to.provider.createFolder(path: to.path("dst/extra folder/inner"), withIntermediateDirectories: true)
            try await to.provider.writeContents(path: to.path("dst/extra folder/inner/f"), data: Data("y".utf8))

            let dry = EventLog()
            _ = try await CopyEngine(options: CopyOptions(dryRun: true)).run(.sync, from: source, to: destination, onEvent: dry.record)
            #expect(Set(dry.wouldDo.filter { $0.action == .delete }.map(\.path)) == ["extra.txt", "extra folder"])
            #expect(try await to.provider.contents(path: to.path("dst/extra.txt")) == Data("x".utf8))

            let summary = try await CopyEngine().run(.sync, from: source, to: destination)
            #expect(summary.failed == 0)
            #expect(summary.deleted == 2)
            #expect(try await snapshot(to, "dst").files == files)

            // A file that cannot be copied: extras stay.
            try await to.provider.writeContents(path: to.path("dst/extra again.txt"), data: Data("z".utf8))
            let unreadable = try await UnreadableFile.make(in: from, at: "src/unreadable")
            let failing = EventLog()
            let failed = try await CopyEngine(options: CopyOptions(retries: 1)).run(.sync, from: source, to: destination, onEvent: failing.record)
            #expect(failed.failed >= 1 || !unreadable)
            if unreadable {
                #expect(failed.deleted == 0)
                #expect(try await to.provider.contents(path: to.path("dst/extra again.txt")) == Data("z".utf8))
                #expect(failing.notices.contains { $0.contains("not deleting anything") })
            }
        }
    }

    @Test("check reports missing, extra and different files", arguments: [EnginePair.all[0], EnginePair.all[3], EnginePair.all[6]])
    func check(pair: EnginePair) async throws {
        try await pair.run { from, to in
            let files = try await makeTree(from)
            let source = TransferEndpoint(provider: from.provider, path: from.path("src"))
            let destination = TransferEndpoint(provider: to.provider, path: to.path("dst"))
            _ = try await CopyEngine().run(.copy, from: source, to: destination)
            #expect(try await CopyEngine().check(source: source, destination: destination).isIdentical)
            try await to.provider.removeItem(path: to.path("dst/#hash"), recursive: false)
            try await to.provider.writeContents(path: to.path("dst/only-here"), data: Data("e".utf8))
            try await to.provider.writeContents(path: to.path("dst/100%"), data: Data("different size".utf8))
            let report = try await CopyEngine().check(source: source, destination: destination)
            #expect(report.missing == ["#hash"])
            #expect(report.extra == ["only-here"])
            #expect(report.different == ["100%"])
            #expect(report.matching == files.count - 2)
        }
    }

    @Test("a same-size change is seen on a destination that cannot keep modification times (plain WebDAV, vsftpd)",
          arguments: [EnginePair(source: .local, destination: .webdavApache), EnginePair(source: .local, destination: .ftpVsftpd)])
    func sameSizeChange(pair: EnginePair) async throws {
        try await pair.run { from, to in
            try await from.provider.createFolder(path: from.path("src"), withIntermediateDirectories: true)
            try await from.provider.writeContents(path: from.path("src/kept.txt"), data: Data("kept".utf8))
            try await from.provider.writeContents(path: from.path("src/edited.txt"), data: Data("before".utf8))
            let source = TransferEndpoint(provider: from.provider, path: from.path("src"))
            let destination = TransferEndpoint(provider: to.provider, path: to.path("dst"))
            #expect(!to.provider.capabilities.supports(.setModificationDate))
            #expect(try await CopyEngine().run(.copy, from: source, to: destination).copied == 2)
            #expect(try await CopyEngine().run(.copy, from: source, to: destination).copied == 0)
            // The same size, written after the copy (its time set two minutes ahead, past LIST's minute precision).
            try await from.provider.writeContents(path: from.path("src/edited.txt"), data: Data("after!".utf8))
            let local = try #require(from.provider as? LocalFileProvider)
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(120)],
                                                  ofItemAtPath: local.rootPath + from.path("src/edited.txt"))
            let report = try await CopyEngine().check(source: source, destination: destination)
            #expect(report.different == ["edited.txt"] && report.matching == 1, "\(report)")
            let again = try await CopyEngine().run(.copy, from: source, to: destination)
            #expect(again.copied == 1 && again.skipped == 1)
            #expect(try await to.provider.contents(path: to.path("dst/edited.txt")) == Data("after!".utf8))
            // --size-only keeps the size rule.
            #expect(try await CopyEngine(options: CopyOptions(sizeOnly: true)).check(source: source, destination: destination).isIdentical)
        }
    }

    @Test("move copies, then removes the sources", arguments: [EnginePair.all[0], EnginePair.all[1], EnginePair.all[5], EnginePair.all[7]])
    func move(pair: EnginePair) async throws {
        try await pair.run { from, to in
            let files = try await makeTree(from)
            let log = EventLog()
            let summary = try await CopyEngine().run(.move, from: TransferEndpoint(provider: from.provider, path: from.path("src")),
                                                     to: TransferEndpoint(provider: to.provider, path: to.path("dst")), onEvent: log.record)
            #expect(summary.failed == 0, "failures: \(log.failures)")
            #expect(try await snapshot(to, "dst").files == files)
            await expectFailure(.notFound) { _ = try await from.provider.attributesOfItem(path: from.path("src")) }
        }
    }

    @Test("cancelling a run stops it promptly and leaves no temporary files", arguments: [EnginePair.all[0], EnginePair.all[1]])
    func cancel(pair: EnginePair) async throws {
        try await pair.run { from, to in
            try await from.provider.createFolder(path: from.path("src"), withIntermediateDirectories: false)
            for index in 0..<4 {
                try await from.provider.writeContents(path: from.path("src/big-\(index)"), data: Bytes.pattern(24_000_000, seed: UInt64(index)))
            }
            let progress = TransferProgress()
            let engine = CopyEngine(options: CopyOptions(transfers: 2))
            let source = TransferEndpoint(provider: from.provider, path: from.path("src"))
            let destination = TransferEndpoint(provider: to.provider, path: to.path("dst"))
            let log = EventLog()
            let task = Task { try await engine.run(.copy, from: source, to: destination, progress: progress, onEvent: log.record) }
            while progress.snapshot.completedBytes < 1_000_000 { try await Task.sleep(for: .milliseconds(2)) }
            let clock = ContinuousClock()
            let cancelled = clock.now
            task.cancel()
            let result = await task.result
            let stopped = cancelled.duration(to: clock.now)
            // It stopped: with a cancellation, or at least before every file was copied.
            switch result {
            case .success(let summary): #expect(summary.copied < 4, "the run went on to the end: \(summary)")
            case .failure(let error): #expect(error is CancellationError || error.failureKind == .cancelled, "\(error)")
            }
            // Promptly: a bound many times what it takes (a few milliseconds), never reached by a working run.
            #expect(stopped < .seconds(5), "stopped \(stopped) after the cancel")
            // The caller's cancellation is not also reported as failures.
            #expect(log.failures.isEmpty, "\(log.failures)")
            let left = try await to.provider.contentsOfDirectory(path: to.path("dst")).collectAll().map(\.name)
            #expect(!left.contains { $0.hasSuffix(".partial") }, "temporaries left: \(left)")
            // Stopped, however it ended: not every file arrived (96 MB at the cancel's first MB).
            #expect(left.count < 4, "the run went on to the end: \(left)")
            for name in left {
                // Whatever arrived is complete.
                let index = Int(name.dropFirst("big-".count))!
                #expect(try await to.provider.contents(path: to.path("dst/" + name)) == Bytes.pattern(24_000_000, seed: UInt64(index)))
            }
        }
    }
}

extension CopyEngineTests {
    @Test("sync's extras pass and check list each folder of the other side once, never one request per file (Apache's log)")
    func extrasByFolder() async throws {
        try await EnginePair(source: .webdavApache, destination: .local).run { from, to in
            for folder in ["one", "two", "two/three"] {
                try await from.provider.createFolder(path: from.path("src/" + folder), withIntermediateDirectories: true)
                for index in 0..<20 { try await from.provider.writeContents(path: from.path("src/\(folder)/f\(index)"), data: Data([UInt8(index)])) }
            }
            let engine = CopyEngine(options: CopyOptions(transfers: 3, checkers: 4))
            let source = TransferEndpoint(provider: from.provider, path: from.path("src"))
            let destination = TransferEndpoint(provider: to.provider, path: to.path("dst"))
            let first = try await engine.run(.sync, from: source, to: destination)
            #expect(first.copied == 60 && first.failed == 0)
            // An extra file and an extra folder (with contents) at the destination.
            try await to.provider.writeContents(path: to.path("dst/two/extra"), data: Data("x".utf8))
            try await to.provider.createFolder(path: to.path("dst/gone/deeper"), withIntermediateDirectories: true)
            try await to.provider.writeContents(path: to.path("dst/gone/deeper/file"), data: Data("y".utf8))

            let folder = String(from.base.split(separator: "/").last!)
            let before = try await ApacheAccessLog.requests("PROPFIND", containing: folder).count
            let report = try await engine.check(source: source, destination: destination)
            #expect(report.extra.sorted() == ["gone/deeper/file", "two/extra"])
            #expect(report.missing.isEmpty && report.different.isEmpty && report.errors.isEmpty)
            #expect(report.matching == 60)
            let afterCheck = try await ApacheAccessLog.requests("PROPFIND", containing: folder).count
            // The source walk (a listing per folder: 4) and the extras' look-ups (a listing per
            // folder: 4, plus the missing "gone" ones), with room for a late log line of the run
            // before. One request per file would be 60 or more.
            #expect(afterCheck - before <= 20, "check sent \(afterCheck - before) PROPFINDs for 60 files in 4 folders")

            let second = try await engine.run(.sync, from: source, to: destination)
            #expect(second.skipped == 60 && second.copied == 0 && second.failed == 0)
            #expect(second.deleted == 2, "the extra file, and the extra folder once for its contents")
            let afterSync = try await ApacheAccessLog.requests("PROPFIND", containing: folder).count
            #expect(afterSync - afterCheck <= 20, "sync sent \(afterSync - afterCheck) PROPFINDs for 60 files in 4 folders")
            #expect(try await to.provider.itemIfPresent(path: to.path("dst/gone")) == nil)
            #expect(try await to.provider.itemIfPresent(path: to.path("dst/two/extra")) == nil)
            #expect(try await to.provider.itemIfPresent(path: to.path("dst/two/three/f19")) != nil)
        }
    }

    @Test("check where one side has a file and the other a folder of that name: missing and extra, no errors (WebDAV both sides)")
    func checkTypeMismatch() async throws {
        try await EnginePair(source: .webdavApache, destination: .webdavApache).run { from, to in
            // Source: folder docs/ with two files, and a file notes. Destination: a file docs, and a
            // folder notes/ holding a file.
            try await from.provider.createFolder(path: from.path("src/docs"), withIntermediateDirectories: true)
            for name in ["a", "b"] { try await from.provider.writeContents(path: from.path("src/docs/" + name), data: Data(name.utf8)) }
            try await from.provider.writeContents(path: from.path("src/notes"), data: Data("n".utf8))
            try await to.provider.createFolder(path: to.path("dst/notes"), withIntermediateDirectories: true)
            try await to.provider.writeContents(path: to.path("dst/docs"), data: Data("d".utf8))
            try await to.provider.writeContents(path: to.path("dst/notes/readme"), data: Data("r".utf8))
            let report = try await CopyEngine().check(source: TransferEndpoint(provider: from.provider, path: from.path("src")),
                                                      destination: TransferEndpoint(provider: to.provider, path: to.path("dst")))
            #expect(report.errors.isEmpty, "\(report.errors)")
            #expect(report.missing == ["docs/a", "docs/b", "notes"])
            #expect(report.extra == ["notes/readme"])
            #expect(!report.isIdentical)
        }
    }

    @Test("cancelling check while a folder listing hangs (a silent server) ends it promptly")
    func checkCancellation() async throws {
        let silent = try SilentServer()
        defer { silent.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("check-cancel-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/src", withIntermediateDirectories: true)
        for index in 0..<5 { try Data("f".utf8).write(to: URL(fileURLWithPath: "\(root)/src/f\(index)")) }
        let local = try LocalFileProvider(name: "local", root: root)
        let stalled = WebDAVProvider(configuration: HTTPClientConfiguration(
            baseURL: URL(string: "http://127.0.0.1:\(silent.port)/")!, remoteName: "silent", connectTimeout: .seconds(60), idleTimeout: .seconds(60)))
        let clock = ContinuousClock()
        let task = Task {
            try await CopyEngine().check(source: TransferEndpoint(provider: local, path: "/src"),
                                         destination: TransferEndpoint(provider: stalled, path: "/dst"))
        }
        // Cancelled once the listing's request hangs on the silent server.
        try await waitUntil("the listing reaching the silent server") { silent.connections > 0 }
        let cancelled = clock.now
        task.cancel()
        _ = try? await task.value
        #expect(clock.now - cancelled < .seconds(10), "the listing's time-out is 60 s; cancelling must not wait for it")
    }

    @Test("check compares up to `checkers` files at once (their hashes are asked for in parallel)")
    func checkUsesCheckers() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for side in ["src", "dst"] {
            try FileManager.default.createDirectory(atPath: root + "/" + side, withIntermediateDirectories: true)
            for index in 0..<12 { try Data("same \(index)".utf8).write(to: URL(fileURLWithPath: "\(root)/\(side)/f\(index)")) }
        }
        let tracker = ConcurrencyTracker()
        let local = try LocalFileProvider(name: "slow", root: root)
        let slow = SlowHashingProvider(base: local, tracker: tracker)
        var options = CopyOptions(checkers: 4)
        options.checksum = true
        let report = try await CopyEngine(options: options)
            .check(source: TransferEndpoint(provider: slow, path: "/src"), destination: TransferEndpoint(provider: slow, path: "/dst"))
        #expect(report.matching == 12 && report.isIdentical, "\(report)")
        // One file at a time asks for two hashes at once (source and destination); four checkers, up to eight.
        #expect(tracker.peak > 2, "at most \(tracker.peak) hashes ran at once")
        #expect(tracker.peak <= 8)
    }

    @Test("an item lies in an extra folder when one of its ancestors is one")
    func liesInFolders() {
        #expect(CopyEngine.lies("a/b/c", inAnyOf: ["a"]))
        #expect(CopyEngine.lies("a/b/c", inAnyOf: ["a/b"]))
        #expect(!CopyEngine.lies("a/b/c", inAnyOf: ["a/b/c"]), "the folder itself is not inside itself")
        #expect(!CopyEngine.lies("ab/c", inAnyOf: ["a"]))
        #expect(!CopyEngine.lies("top", inAnyOf: ["top2", "to"]))
        #expect(!CopyEngine.lies("a/b", inAnyOf: []))
    }
}

/// Collects engine events.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [CopyEvent] = []

    var record: @Sendable (CopyEvent) -> Void { { [self] event in lock.withLock { events.append(event) } } }

    var all: [CopyEvent] { lock.withLock { events } }

    var wouldDo: [(action: PlannedAction, path: String)] {
        lock.withLock { events.compactMap { if case .wouldDo(let action, let path) = $0 { (action, path) } else { nil } } }
    }

    var notices: [String] {
        lock.withLock { events.compactMap { if case .notice(let text) = $0 { text } else { nil } } }
    }
}

/// A source file that cannot be read: on Local, a link pointing outside the provider's root.
enum UnreadableFile {
    /// Returns `false` when the provider has no way to make one (the test then checks less).
    static func make(in s: ProviderScratch, at relative: String) async throws -> Bool {
        guard let local = s.provider as? LocalFileProvider else { return false }
        try FileManager.default.createSymbolicLink(atPath: local.rootPath + s.path(relative), withDestinationPath: "/etc/hostname")
        return true
    }
}

/// Counts how many calls run at once.
final class ConcurrencyTracker: @unchecked Sendable {
    private let lock = NSLock()
    private var running = 0
    private(set) var peak = 0
    func enter() { lock.withLock { running += 1; peak = max(peak, running) } }
    func leave() { lock.withLock { running -= 1 } }
}

/// A Local provider whose content hashes take 50 ms each, counted by a ``ConcurrencyTracker``.
struct SlowHashingProvider: FileProviderHashing {
    static let type = "slow-hashing"
    let base: LocalFileProvider
    let tracker: ConcurrencyTracker
    var name: String { base.name }
    var baseURL: URL { base.baseURL }
    var capabilities: ProviderCapabilities { base.capabilities }
    func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing { base.contentsOfDirectory(path: path, pageSize: pageSize) }
    func attributesOfItem(path: String) async throws -> FileObject { try await base.attributesOfItem(path: path) }
    func storageProperties(path: String) async throws -> VolumeObject { try await base.storageProperties(path: path) }
    func walk(path: String, pageSize: Int) -> PullSequence<FileObject> { base.walk(path: path, pageSize: pageSize) }
    func searchFiles(path: String, recursive: Bool, matching: @escaping @Sendable (FileObject) throws -> Bool) -> PullSequence<FileObject> {
        base.searchFiles(path: path, recursive: recursive, matching: matching)
    }
    func url(of path: String) throws -> URL { try base.url(of: path) }
    func relativePathOf(url: URL) throws -> String { try base.relativePathOf(url: url) }
    func isReachable() async -> Bool { await base.isReachable() }
    func hash(of path: String, algorithm: HashAlgorithm) async throws -> String? {
        tracker.enter()
        defer { tracker.leave() }
        try await Task.sleep(for: .milliseconds(50))
        return try await base.hash(of: path, algorithm: algorithm)
    }
}
