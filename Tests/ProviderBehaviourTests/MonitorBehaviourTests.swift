import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// The change-monitor behaviour every backend shares: anchors and catch-up, live events, expired
/// anchors, cancellation. Changes are made from outside the gateway.
@Suite("Change monitoring", .serialized)
struct MonitorBehaviourTests {
    @Test("anchors: changes made while not watching are caught up, in pages, exactly once", arguments: MonitorFixture.all)
    func catchUpFromAnchor(fixture: MonitorFixture) async throws {
        try await fixture.run { s in
            try s.outside.write(s.path("a.txt"), Data("one".utf8))
            try s.outside.write(s.path("e.txt"), Data("rename me".utf8))
            try s.outside.makeFolder(s.path("sub"))
            try s.outside.write(s.path("sub/b.txt"), Data("b".utf8))
            try s.outside.makeFolder(s.path("old"))
            try s.outside.write(s.path("old/inside.txt"), Data("i".utf8))
            try s.outside.makeFolder(s.path("gone"))
            let anchor = try await s.provider.currentAnchor(at: s.base, recursive: true)
            // Nothing changed yet: nothing to report.
            let quiet = try await MonitorChecks.catchUp(s.provider, since: anchor, base: s.base)
            #expect(quiet.changes.isEmpty, "\(quiet.changes)")

            try s.outside.write(s.path("c.txt"), Data("new".utf8))
            try s.outside.write(s.path("a.txt"), Data("one, longer".utf8))
            try s.outside.remove(s.path("sub/b.txt"), false)
            try s.outside.makeFolder(s.path("newdir"))
            // Not the size of the removed sub/b.txt: a reused inode with the same size and second is a rename.
            try s.outside.write(s.path("newdir/d.txt"), Data("d, longer".utf8))
            try s.outside.rename(s.path("e.txt"), s.path("f.txt"))
            try s.outside.rename(s.path("old"), s.path("moved"))
            try s.outside.remove(s.path("gone"), true)

            // An anchor survives a restart: encode it as an app would store it, and decode it.
            let stored = try JSONEncoder().encode(quiet.anchor)
            let restored = try JSONDecoder().decode(SyncAnchor.self, from: stored)
            let caught = try await MonitorChecks.catchUp(s.provider, since: restored, pageSize: 2, base: s.base)
            let changes = caught.changes
            #expect(caught.pages >= 2, "a page size of 2 must split \(changes.count) changes")
            #expect(changes.contains(SeenChange(.created, "c.txt")), "\(changes)")
            #expect(changes.contains(SeenChange(.modified, "a.txt")), "\(changes)")
            #expect(changes.contains(SeenChange(.removed, "sub/b.txt")), "\(changes)")
            #expect(changes.contains(SeenChange(.created, "newdir")), "\(changes)")
            #expect(changes.contains(SeenChange(.created, "newdir/d.txt")), "\(changes)")
            #expect(changes.contains(SeenChange(.removed, "gone")), "\(changes)")
            let newdir = changes.firstIndex(of: SeenChange(.created, "newdir"))
            let member = changes.firstIndex(of: SeenChange(.created, "newdir/d.txt"))
            if let newdir, let member { #expect(newdir < member, "a folder is reported before its members") }
            MonitorChecks.expectRename(changes, from: "e.txt", to: "f.txt", asRename: fixture.reportsRenames)
            MonitorChecks.expectRename(changes, from: "old", to: "moved", asRename: fixture.reportsFolderRenames)
            #expect(!changes.contains { $0.kind == .modified && ($0.path == "sub" || $0.path.isEmpty) }, "folders are not 'modified': \(changes)")
            #expect(Set(changes).count == changes.count, "each change once: \(changes)")
            // Events carry the item as it is now.
            let page = try await s.provider.changes(since: restored, pageSize: 100)
            if let created = page.events.first(where: { $0.kind == .created && $0.path.hasSuffix("/c.txt") }) {
                #expect(created.item?.size == 3)
                #expect(created.item?.type == .file)
            } else {
                Issue.record("no created event for c.txt in the first page")
            }
            if let removed = page.events.first(where: { $0.kind == .removed && $0.path.hasSuffix("/sub/b.txt") }) {
                #expect(removed.item?.type == .file, "a removal says what was removed")
            }
            // Caught up: asking again reports nothing new.
            let again = try await MonitorChecks.catchUp(s.provider, since: caught.anchor, base: s.base)
            #expect(again.changes.isEmpty, "\(again.changes)")
        }
    }

    @Test("an anchor that can't be served is expired: store removed, garbage, another remote", arguments: MonitorFixture.all)
    func expiredAnchors(fixture: MonitorFixture) async throws {
        try await fixture.run { s in
            try s.outside.write(s.path("a.txt"), Data("one".utf8))
            let anchor = try await s.provider.currentAnchor(at: s.base, recursive: true)
            await expectExpired { _ = try await s.provider.changes(since: SyncAnchor(rawValue: Data("{}".utf8)), pageSize: 10) }
            await expectExpired { _ = try await s.provider.changes(since: SyncAnchor(rawValue: Data(repeating: 0xff, count: 100)), pageSize: 10) }
            let other = try LocalFileProvider(name: "other", root: NSTemporaryDirectory(), stateDirectory: URL(fileURLWithPath: s.stateDirectory))
            if !(s.provider is LocalFileProvider) || (s.provider as? LocalFileProvider)?.rootPath != other.rootPath {
                await expectExpired { _ = try await other.changes(since: anchor, pageSize: 10) }
            }
            // The state is lost (removed by hand): the anchor expires, and a new one starts over.
            try FileManager.default.removeItem(atPath: s.stateDirectory + "/monitor")
            await expectExpired { _ = try await s.provider.changes(since: anchor, pageSize: 10) }
            let fresh = try await s.provider.currentAnchor(at: s.base, recursive: true)
            try s.outside.write(s.path("b.txt"), Data("two".utf8))
            let caught = try await MonitorChecks.catchUp(s.provider, since: fresh, base: s.base)
            #expect(caught.changes == [SeenChange(.created, "b.txt")])
        }
    }

    /// Changes are seen within one interval (1 s) plus a second; the bound is several times that,
    /// so only a monitor that stopped fails it on a loaded CI machine (speed is for bench.sh).
    static let seenWithin: Duration = .seconds(8)

    @Test("live: files and folders created, modified, renamed and removed are seen within one interval plus a second", arguments: MonitorFixture.all)
    func liveEvents(fixture: MonitorFixture) async throws {
        try await fixture.run { s in
            try s.outside.write(s.path("keep.txt"), Data("k".utf8))
            try s.outside.makeFolder(s.path("empty"))
            let collected = Locked<[SeenChange]>([])
            let stream = s.provider.changes(at: s.base, options: MonitorOptions(recursive: true, interval: .seconds(1)))
            let base = s.base
            let watcher = Task {
                for try await event in stream { collected.mutate { $0.append(SeenChange(event, base: base)) } }
            }
            defer { watcher.cancel() }
            // The stream records the state when first asked: it is watching once it reports a
            // probe written after that (written again, a byte longer, until it does).
            try await waitUntilWatching(collected, probe: "probe.txt") { round in
                try s.outside.write(s.path("probe.txt"), Data(repeating: 0x70, count: round))
            }
            try s.outside.write(s.path("new.txt"), Data("n".utf8))
            try s.outside.makeFolder(s.path("dir"))
            try s.outside.write(s.path("dir/inner.txt"), Data("inner".utf8))
            try await waitFor(collected, timeout: Self.seenWithin) { changes in
                changes.contains(SeenChange(.created, "new.txt")) && changes.contains(SeenChange(.created, "dir/inner.txt"))
            }
            try s.outside.write(s.path("keep.txt"), Data("kept, longer".utf8))
            try s.outside.rename(s.path("new.txt"), s.path("renamed.txt"))
            try s.outside.remove(s.path("dir/inner.txt"), false)
            try await waitFor(collected, timeout: Self.seenWithin) { changes in
                changes.contains(SeenChange(.modified, "keep.txt")) && changes.contains(SeenChange(.removed, "dir/inner.txt"))
                    && (changes.contains(SeenChange(.renamed, "renamed.txt", from: "new.txt")) || changes.contains(SeenChange(.created, "renamed.txt")))
            }
            // Folders: one renamed, one removed.
            try s.outside.rename(s.path("dir"), s.path("dir2"))
            try s.outside.remove(s.path("empty"), true)
            try await waitFor(collected, timeout: Self.seenWithin) { changes in
                changes.contains(SeenChange(.removed, "empty"))
                    && (changes.contains(SeenChange(.renamed, "dir2", from: "dir")) || changes.contains(SeenChange(.created, "dir2")))
            }
            let changes = collected.value
            #expect(changes.contains(SeenChange(.created, "dir")))
            MonitorChecks.expectRename(changes, from: "new.txt", to: "renamed.txt", asRename: fixture.reportsRenames)
            MonitorChecks.expectRename(changes, from: "dir", to: "dir2", asRename: fixture.reportsFolderRenames)
            #expect(!changes.contains(SeenChange(.created, "keep.txt")), "the state before watching is not reported: \(changes)")
        }
    }

    @Test("cancelling a live stream ends it promptly, while it waits out a long interval", arguments: MonitorFixture.all)
    func cancellation(fixture: MonitorFixture) async throws {
        try await fixture.run { s in
            // The catch-up page comes at once (empty or not); after it the stream waits 30 s for
            // its next look. Cancelled then, it must end without waiting that out.
            let anchor = try await s.provider.currentAnchor(at: s.base, recursive: true)
            let pages = s.provider.changePages(since: anchor, options: MonitorOptions(recursive: true, interval: .seconds(30)))
            let caughtUp = Locked(false)
            let watcher = Task { () -> Int in
                var count = 0
                do {
                    for try await _ in pages {
                        count += 1
                        caughtUp.mutate { $0 = true }
                    }
                } catch is CancellationError {}
                return count
            }
            try await waitUntil("the catch-up page") { caughtUp.value }
            let started = ContinuousClock.now
            watcher.cancel()
            _ = try? await watcher.value
            #expect(ContinuousClock.now - started < .seconds(10), "ended \(ContinuousClock.now - started) after cancel (a poll ignoring it: 30 s)")
        }
    }
}

