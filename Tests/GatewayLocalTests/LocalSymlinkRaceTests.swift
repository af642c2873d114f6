#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
@testable import GatewayTestSupport
@testable import GatewayLocal
import Logging
import StorageGateway
import Synchronization
import Testing

/// The local provider must stay inside its root even while someone swaps a folder inside it for a
/// symbolic link pointing out (a time-of-check/time-of-use race on the path).
@Suite("Local provider stays inside its root under a symlink race", .serialized)
struct LocalSymlinkRaceTests {
    /// Counters shared between the swapping thread and the test.
    final class Race: Sendable {
        let stop = Atomic<Bool>(false)
        let rounds = Atomic<Int>(0)
    }

    /// What one run of the race saw.
    struct Outcome {
        var rounds = 0
        var operations = 0
        var readsOfOutside = 0
        var writesOutside = 0
        /// Writes into `dir` that succeeded (it was the real folder) and that were refused (it was
        /// the link): a race that saw only one of the two proved nothing.
        var writesDone = 0
        var writesRefused = 0
    }

    /// Swaps `root/dir` (a real folder) and `root/link` (a symbolic link to `outside`) back and forth
    /// with renames, so `root/dir` is alternately the folder and the link, until told to stop.
    ///
    /// While `root/dir` is briefly missing between two renames, the provider may make a new folder
    /// there (`createFolder` with intermediate folders does, as it should): the rename that puts the
    /// link or the real folder back then fails, and without care the race would stop swapping for
    /// good (seen on CI: thousands of writes, none refused). Such a stray folder, made inside the
    /// root by the provider, is removed and the rename done again.
    static func swapper(root: String, race: Race) {
        let dir = root + "/dir", real = root + "/dir.real", link = root + "/link"
        func put(_ from: String, at to: String) {
            while rename(from, to) != 0, errno == EEXIST || errno == ENOTEMPTY || errno == EISDIR || errno == ENOTDIR {
                try? FileManager.default.removeItem(atPath: to)
            }
        }
        while !race.stop.load(ordering: .relaxed) {
            rename(dir, real)
            put(link, at: dir)  // root/dir now points outside
            usleep(10)  // a short sleep: spinning or yielding starves one side or the other on few cores
            rename(dir, link)
            put(real, at: dir)  // root/dir is the folder again
            usleep(10)
            race.rounds.add(1, ordering: .relaxed)
        }
    }

    /// The modification time the outside file keeps unless something touches it.
    static let outsideTime = Date(timeIntervalSince1970: 1_000_000_000)

    /// The entries of the outside folder, the contents of its file and its modification time, to detect any change.
    static func snapshot(_ outside: String) -> (names: [String], secret: Data?, time: Date?) {
        let fm = FileManager.default
        let names = (try? fm.contentsOfDirectory(atPath: outside).sorted()) ?? []
        let time = (try? fm.attributesOfItem(atPath: outside + "/data.txt"))?[.modificationDate] as? Date
        return (names, fm.contents(atPath: outside + "/data.txt"), time)
    }

    /// Puts the outside folder back as it was.
    static func restore(_ outside: String, secret: Data) throws {
        let fm = FileManager.default
        for name in (try? fm.contentsOfDirectory(atPath: outside)) ?? [] where name != "data.txt" {
            try? fm.removeItem(atPath: outside + "/" + name)
        }
        try secret.write(to: URL(fileURLWithPath: outside + "/data.txt"))
        try fm.setAttributes([.modificationDate: outsideTime], ofItemAtPath: outside + "/data.txt")
    }

    /// Runs the race for `duration` against a provider made by `makeProvider` (given the root), and
    /// on (up to twenty times as long, a bound only a broken run reaches) until at least
    /// `minimumRounds` rounds of operations and twice as many swaps happened, and writes met both
    /// states of the folder, so a loaded machine still races enough; the caller checks that they did.
    static func run(duration: Duration, minimumRounds: Int = 1000, makeProvider: (String) throws -> LocalFileProvider) async throws -> Outcome {
        let base = try TemporaryFolder.make(prefix: "gateway-race")
        defer { base.remove() }
        let root = base.path + "/root", outside = base.path + "/outside"
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/dir", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let secret = Data("OUTSIDE-SECRET".utf8)
        try restore(outside, secret: secret)
        try Data("inside".utf8).write(to: URL(fileURLWithPath: root + "/dir/data.txt"))
        try Data("source".utf8).write(to: URL(fileURLWithPath: root + "/source.txt"))
        try fm.createSymbolicLink(atPath: root + "/link", withDestinationPath: outside)
        let provider = try makeProvider(root)
        let pristine = snapshot(outside)

        let race = Race()
        let finished = Mutex(false)
        Thread.detachNewThread {
            swapper(root: root, race: race)
            finished.withLock { $0 = true }
        }
        defer {
            race.stop.store(true, ordering: .relaxed)
            while !finished.withLock({ $0 }) { usleep(1000) }
        }

        var outcome = Outcome()
        let clock = ContinuousClock()
        let start = clock.now
        func enough() -> Bool {
            let elapsed = clock.now - start
            if elapsed >= duration * 20 { return true }
            // Until both states were met too (a write through the real folder and one refused
            // through the link): on a busy machine the swaps and the writes can fall into step.
            return elapsed >= duration && outcome.operations >= minimumRounds
                && race.rounds.load(ordering: .relaxed) >= 2 * minimumRounds
                && outcome.writesDone > 0 && outcome.writesRefused > 0
        }
        while !enough() {
            let n = outcome.operations
            outcome.operations += 1
            // Writes into the folder (atomic, in place, and a copy into it)...
            if (try? await provider.writeContents(path: "/dir/data.txt", data: Data("inside".utf8))) != nil {
                outcome.writesDone += 1
            } else {
                outcome.writesRefused += 1
            }
            _ = try? await provider.writeContents(path: "/dir/new-\(n % 8).txt", data: Data("new".utf8), atomically: false)
            try? await provider.copyItem(path: "/source.txt", to: "/dir/copied.txt", overwrite: true, progress: nil)
            try? await provider.createFolder(path: "/dir/made", withIntermediateDirectories: true)
            try? await provider.setModificationDate(Date(timeIntervalSince1970: 0), path: "/dir/data.txt")
            // ...and reads out of it (directly, and by copying out of it).
            var reads: [Data] = []
            if let data = try? await provider.contents(path: "/dir/data.txt") { reads.append(data) }
            if (try? await provider.copyItem(path: "/dir/data.txt", to: "/copied-out.txt", overwrite: true, progress: nil)) != nil,
               let data = fm.contents(atPath: root + "/copied-out.txt") {
                reads.append(data)
            }
            outcome.readsOfOutside += reads.filter { $0 == secret }.count
            // Anything changed outside counts once; put it back so later escapes are counted too.
            let now = snapshot(outside)
            if now.names != pristine.names || now.secret != pristine.secret || now.time != pristine.time {
                outcome.writesOutside += 1
                try restore(outside, secret: secret)
            }
        }
        race.stop.store(true, ordering: .relaxed)
        outcome.rounds = race.rounds.load(ordering: .relaxed)
        return outcome
    }

    /// How the provider resolves paths: through `openat2`, or component by component (the fallback
    /// for kernels without it).
    enum Resolution: String, CaseIterable, CustomTestStringConvertible {
        case openat2
        case walk

        var testDescription: String { rawValue }

        func provider(root: String) throws -> LocalFileProvider {
            try LocalFileProvider(name: "race", root: root, logger: Logger(label: "test"), useOpenat2: self == .openat2)
        }
    }

    @Test("swapping a folder for a link pointing out, while writing into and reading from it, never reaches outside",
          .timeLimit(.minutes(1)), arguments: Resolution.allCases)
    func folderSwappedForOutsideLink(resolution: Resolution) async throws {
        let outcome = try await Self.run(duration: .seconds(2), makeProvider: resolution.provider(root:))
        print("local symlink race (\(resolution.rawValue)): \(outcome.rounds) swaps, \(outcome.operations) rounds of operations, "
              + "\(outcome.readsOfOutside) reads of outside content, \(outcome.writesOutside) rounds that changed outside")
        #expect(outcome.rounds >= 2000, "the swapping thread hardly ran: \(outcome.rounds) swaps")
        #expect(outcome.operations >= 1000, "only \(outcome.operations) rounds of operations")
        // Both states were met: writes into the real folder went through, writes through the link were refused.
        #expect(outcome.writesDone > 0 && outcome.writesRefused > 0, "done \(outcome.writesDone), refused \(outcome.writesRefused)")
        #expect(outcome.readsOfOutside == 0, "reads returned the outside file's contents")
        #expect(outcome.writesOutside == 0, "writes changed the folder outside the root")
    }

    @Test("link rules: relative and absolute links inside the root are followed, escapes refused", arguments: Resolution.allCases)
    func linkRules(resolution: Resolution) async throws {
        let base = try TemporaryFolder.make(prefix: "gateway-links")
        defer { base.remove() }
        let fm = FileManager.default
        let root = base.path + "/root", outside = base.path + "/outside"
        try fm.createDirectory(atPath: root + "/a/b", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try Data("secret".utf8).write(to: URL(fileURLWithPath: outside + "/secret.txt"))
        try Data("deep".utf8).write(to: URL(fileURLWithPath: root + "/a/b/deep.txt"))
        let p = try resolution.provider(root: root)
        let real = p.rootPath
        // Relative links, with '..' resolved against the folders really walked through.
        try fm.createSymbolicLink(atPath: root + "/a/up", withDestinationPath: "../a/b")
        try fm.createSymbolicLink(atPath: root + "/a/b/top", withDestinationPath: "../..")
        try fm.createSymbolicLink(atPath: root + "/a/b/climb", withDestinationPath: "../../../outside/secret.txt")
        // Absolute links: followed when they name the root's real path, else refused.
        try fm.createSymbolicLink(atPath: root + "/abs-in", withDestinationPath: real + "/a/b/deep.txt")
        try fm.createSymbolicLink(atPath: root + "/abs-dir", withDestinationPath: real + "/a")
        try fm.createSymbolicLink(atPath: root + "/abs-dotdot", withDestinationPath: real + "/../outside/secret.txt")
        try fm.createSymbolicLink(atPath: root + "/abs-new", withDestinationPath: real + "/a/created.txt")
        try fm.createSymbolicLink(atPath: root + "/rel-new", withDestinationPath: "a/b/also-created.txt")

        #expect(try await p.contents(path: "/a/up/deep.txt") == Data("deep".utf8))
        #expect(try await p.contents(path: "/a/b/top/a/b/deep.txt") == Data("deep".utf8))
        #expect(try await p.contents(path: "/abs-in") == Data("deep".utf8))
        #expect(try await p.contents(path: "/abs-dir/b/deep.txt") == Data("deep".utf8))
        #expect(try await p.attributesOfItem(path: "/a/b/top").extraProperties["target_type"] == "directory")
        #expect(try await p.contentsOfDirectory(path: "/a/b/top").collectAll().map(\.name).sorted()
                == ["a", "abs-dir", "abs-dotdot", "abs-in", "abs-new", "rel-new"])
        await expectFailure(.permissionDenied) { _ = try await p.contents(path: "/a/b/climb") }
        await expectFailure(.permissionDenied) { _ = try await p.contents(path: "/abs-dotdot") }
        await expectFailure(.permissionDenied) { try await p.writeContents(path: "/abs-dotdot", data: Data("x".utf8), atomically: false) }
        // Writing through a dangling link creates its target; the link stays a link.
        _ = try await p.writeContents(path: "/abs-new", data: Data("new".utf8))
        _ = try await p.writeContents(path: "/rel-new", data: Data("also".utf8), atomically: false)
        #expect(fm.contents(atPath: root + "/a/created.txt") == Data("new".utf8))
        #expect(fm.contents(atPath: root + "/a/b/also-created.txt") == Data("also".utf8))
        #expect(try await p.attributesOfItem(path: "/abs-new").type == .symbolicLink)
        // Operations on a missing folder fail as "not found", and a file is not a folder.
        await expectFailure(.notFound) { _ = try await p.contents(path: "/missing/x.txt") }
        await expectFailure(.notFound) { try await p.writeContents(path: "/missing/x.txt", data: Data("x".utf8)) }
        await #expect(throws: (any Error).self) { _ = try await p.contents(path: "/a/b/deep.txt/x") }
        // Moves, removal and folders act on the links themselves, inside the root.
        try await p.moveItem(path: "/abs-in", to: "/a/moved-link", overwrite: false)
        #expect(try await p.contents(path: "/a/moved-link") == Data("deep".utf8))
        try await p.createFolder(path: "/abs-dir/b/c/d", withIntermediateDirectories: true)
        #expect(fm.fileExists(atPath: root + "/a/b/c/d"))
        try await p.removeItem(path: "/a/b", recursive: true)
        #expect(!fm.fileExists(atPath: root + "/a/b"))
        #expect(fm.contents(atPath: outside + "/secret.txt") == Data("secret".utf8))
        #expect(try fm.contentsOfDirectory(atPath: outside) == ["secret.txt"])
    }
}
