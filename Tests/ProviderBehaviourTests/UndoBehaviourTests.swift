import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// Undo and the trash, on every backend: each change made through the undoable operations is
/// reverted byte for byte, undo refuses to touch what changed since, and the trash lists,
/// restores and empties.
@Suite("Undo and trash")
struct UndoBehaviourTests {
    @Test("remove a file and a folder tree into the trash; undo brings both back byte for byte", arguments: UndoFixture.all)
    func removeAndUndo(fixture: UndoFixture) async throws {
        try await fixture.run { s in
            let p = s.provider
            let one = Bytes.pattern(70_000, seed: 1)
            try await p.writeContents(path: s.path("one.bin"), data: one)
            try await p.createFolder(path: s.path("tree/sub"), withIntermediateDirectories: true)
            try await p.writeContents(path: s.path("tree/a.txt"), data: Data("a".utf8))
            try await p.writeContents(path: s.path("tree/sub/b.txt"), data: Data("bee".utf8))

            let file = try await p.removeItemUndoably(path: s.path("one.bin"), recursive: false)
            let tree = try await p.removeItemUndoably(path: s.path("tree"), recursive: true)
            #expect(file.operation == .remove && file.isUndoable && !file.isPermanent)
            #expect(try await p.itemIfPresent(path: s.path("one.bin")) == nil)
            #expect(try await p.itemIfPresent(path: s.path("tree")) == nil)

            let trash = try #require(p.trash)
            let items = try await collect(trash.items()).filter { $0.originalPath?.hasPrefix(s.base + "/") == true }
            #expect(Set(items.compactMap(\.originalPath)) == [s.path("one.bin"), s.path("tree")], "\(items)")
            let listedFile = items.first { $0.originalPath == s.path("one.bin") }
            #expect(listedFile?.size == Int64(one.count))
            #expect(items.first { $0.originalPath == s.path("tree") }?.type == .directory)
            #expect(items.allSatisfy { abs(($0.deletionDate ?? .distantPast).timeIntervalSinceNow) < 300 }, "deletion dates are now")

            try await p.undo(tree)
            try await p.undo(file)
            #expect(try await p.contents(path: s.path("one.bin")) == one)
            #expect(try await p.contents(path: s.path("tree/a.txt")) == Data("a".utf8))
            #expect(try await p.contents(path: s.path("tree/sub/b.txt")) == Data("bee".utf8))
            let left = try await collect(trash.items()).filter { $0.originalPath?.hasPrefix(s.base + "/") == true }
            #expect(left.isEmpty, "restored items leave the trash: \(left)")
        }
    }

    @Test("overwrite keeps the previous content in the trash; undo puts it back and keeps the newer", arguments: UndoFixture.all)
    func overwriteAndUndo(fixture: UndoFixture) async throws {
        try await fixture.run { s in
            let p = s.provider
            let old = Bytes.pattern(40_000, seed: 2)
            let new = Bytes.pattern(50_000, seed: 3)
            try await p.writeContents(path: s.path("f.bin"), data: old)
            let (_, record) = try await p.writeUndoably(path: s.path("f.bin"), from: ByteStream(data: new),
                                                        options: WriteOptions(expectedSize: Int64(new.count)))
            #expect(record.operation == .overwrite)
            #expect(try await p.contents(path: s.path("f.bin")) == new)
            try await p.undo(record)
            #expect(try await p.contents(path: s.path("f.bin")) == old)
            // The content undo replaced is in the trash, not lost.
            let trash = try #require(p.trash)
            let kept = try await collect(trash.items()).filter { $0.originalPath == s.path("f.bin") }
            #expect(kept.count == 1 && kept.first?.size == Int64(new.count), "\(kept)")

            // A write of a new file is undone by trashing it.
            let (_, created) = try await p.writeUndoably(path: s.path("new.txt"), from: ByteStream(data: Data("n".utf8)), options: WriteOptions())
            #expect(created.operation == .create)
            try await p.undo(created)
            #expect(try await p.itemIfPresent(path: s.path("new.txt")) == nil)
        }
    }

    @Test("move over an existing file, undo: both are back", arguments: UndoFixture.all)
    func moveAndUndo(fixture: UndoFixture) async throws {
        try await fixture.run { s in
            let p = s.provider
            try await p.writeContents(path: s.path("a.txt"), data: Data("moved".utf8))
            try await p.writeContents(path: s.path("b.txt"), data: Data("replaced".utf8))
            let record = try await p.moveItemUndoably(path: s.path("a.txt"), to: s.path("b.txt"), overwrite: true)
            #expect(record.operation == .move && record.trashName != nil)
            #expect(try await p.contents(path: s.path("b.txt")) == Data("moved".utf8))
            try await p.undo(record)
            #expect(try await p.contents(path: s.path("a.txt")) == Data("moved".utf8))
            #expect(try await p.contents(path: s.path("b.txt")) == Data("replaced".utf8))

            // A folder moved into a new folder's place, and back.
            try await p.createFolder(path: s.path("d/e"), withIntermediateDirectories: true)
            let folder = try await p.moveItemUndoably(path: s.path("d"), to: s.path("d2"), overwrite: false)
            try await p.undo(folder)
            #expect(try await p.attributesOfItem(path: s.path("d/e")).isDirectory)
            #expect(try await p.itemIfPresent(path: s.path("d2")) == nil)
        }
    }

    @Test("create: a folder made with its parents, and a server-side copy, are undone", arguments: UndoFixture.all)
    func createAndUndo(fixture: UndoFixture) async throws {
        try await fixture.run { s in
            let p = s.provider
            let made = try await p.createFolderUndoably(path: s.path("x/y/z"))
            #expect(made.map(\.path) == [s.path("x"), s.path("x/y"), s.path("x/y/z")], "each folder made is recorded, outermost first")
            #expect(try await p.createFolderUndoably(path: s.path("x/y")).isEmpty, "an existing folder makes no record")
            // Something put into x/y since: x/y and x stay, x/y/z goes.
            try await p.writeContents(path: s.path("x/y/later.txt"), data: Data("later".utf8))
            try await p.undo(made[2])
            await expectFailure(.conflict) { try await p.undo(made[1]) }
            #expect(try await p.itemIfPresent(path: s.path("x/y/z")) == nil)
            #expect(try await p.contents(path: s.path("x/y/later.txt")) == Data("later".utf8))

            // A copy is undone whether the server copies (Local, WebDAV, FTP with SITE COPY) or the
            // bytes go through the client (the other FTP servers).
            try await p.writeContents(path: s.path("src.txt"), data: Data("source".utf8))
            try await p.writeContents(path: s.path("dst.txt"), data: Data("older".utf8))
            let copy = try await p.copyItemUndoably(path: s.path("src.txt"), to: s.path("dst.txt"), overwrite: true)
            #expect(copy.operation == .overwrite && copy.trashName != nil)
            #expect(try await p.contents(path: s.path("dst.txt")) == Data("source".utf8))
            var names: [String] = []
            for try await item in p.contentsOfDirectory(path: s.base).entries { names.append(item.name) }
            #expect(!names.contains { $0.contains(".gateway-") && $0.hasSuffix(".partial") }, "the copy's temporary name is gone: \(names)")
            try await p.undo(copy)
            #expect(try await p.contents(path: s.path("dst.txt")) == Data("older".utf8))
        }
    }

    @Test("undo refuses to touch an item changed after the operation, or a place taken again", arguments: UndoFixture.all)
    func undoRefusesChangedItems(fixture: UndoFixture) async throws {
        try await fixture.run { s in
            let p = s.provider
            try await p.writeContents(path: s.path("f.txt"), data: Data("one".utf8))
            let (_, record) = try await p.writeUndoably(path: s.path("f.txt"), from: ByteStream(data: Data("two".utf8)), options: WriteOptions())
            // Someone writes again after the gateway's overwrite (another size).
            try await p.writeContents(path: s.path("f.txt"), data: Data("three, longer".utf8))
            await expectFailure(.conflict) { try await p.undo(record) }
            #expect(try await p.contents(path: s.path("f.txt")) == Data("three, longer".utf8), "the later content stays")

            // A removed item whose name is taken again is not restored over it.
            try await p.writeContents(path: s.path("g.txt"), data: Data("g".utf8))
            let removal = try await p.removeItemUndoably(path: s.path("g.txt"), recursive: false)
            try await p.writeContents(path: s.path("g.txt"), data: Data("new g".utf8))
            do {
                try await p.undo(removal)
                Issue.record("undo restored over a new file")
            } catch let error as FileProviderError {
                guard case .undoRefused(let path, _) = error else { throw error }
                #expect(path == s.path("g.txt"))
            }
            #expect(try await p.contents(path: s.path("g.txt")) == Data("new g".utf8))

            // A non-recursive removal of a folder with contents fails as on the plain operation.
            try await p.createFolder(path: s.path("full"), withIntermediateDirectories: false)
            try await p.writeContents(path: s.path("full/x"), data: Data("x".utf8))
            await expectFailure(.directoryNotEmpty) { _ = try await p.removeItemUndoably(path: s.path("full"), recursive: false) }
        }
    }

    @Test("trash: list, restore elsewhere, and empty what is older than a date", arguments: UndoFixture.all)
    func trashListRestoreEmpty(fixture: UndoFixture) async throws {
        try await fixture.run { s in
            let p = s.provider
            let trash = try #require(p.trash)
            for name in ["old.txt", "new.txt", "back.txt"] {
                try await p.writeContents(path: s.path(name), data: Data(name.utf8))
            }
            let tenDaysAgo = Date().addingTimeInterval(-10 * 86_400)
            try await trash.trashItem(at: s.path("old.txt"), date: tenDaysAgo)
            try await trash.trashItem(at: s.path("new.txt"))
            let back = try await trash.trashItem(at: s.path("back.txt"))
            // The same name twice gets two entries.
            try await p.writeContents(path: s.path("new.txt"), data: Data("again".utf8))
            try await trash.trashItem(at: s.path("new.txt"))

            var mine = try await collect(trash.items()).filter { $0.originalPath?.hasPrefix(s.base + "/") == true }
            #expect(mine.count == 4, "\(mine)")
            #expect(mine.filter { $0.originalPath == s.path("new.txt") }.count == 2)
            let old = try #require(mine.first { $0.originalPath == s.path("old.txt") })
            #expect(abs((old.deletionDate ?? .distantFuture).timeIntervalSince(tenDaysAgo)) < 2, "deletion date kept to the second")

            try await trash.restore(back, to: s.path("elsewhere.txt"))
            #expect(try await p.contents(path: s.path("elsewhere.txt")) == Data("back.txt".utf8))

            let removed = try await trash.empty(olderThan: Date().addingTimeInterval(-86_400))
            #expect(removed >= 1)
            mine = try await collect(trash.items()).filter { $0.originalPath?.hasPrefix(s.base + "/") == true }
            #expect(Set(mine.compactMap(\.originalPath)) == [s.path("new.txt")], "only the old item went: \(mine)")
            #expect(mine.count == 2)
        }
    }

    @Test("a path too long to be a trash name of its own keeps a record beside it, and comes back", arguments: UndoFixture.all)
    func longPath(fixture: UndoFixture) async throws {
        try await fixture.run { s in
            let p = s.provider
            // 160 bytes as a name; escaped for a network trash's own name it would be 480.
            let long = String(repeating: "ü", count: 80)
            try await p.writeContents(path: s.path(long), data: Data("long".utf8))
            let record = try await p.removeItemUndoably(path: s.path(long), recursive: false)
            let trash = try #require(p.trash)
            let listed = try await collect(trash.items(under: s.base))
            #expect(listed.map(\.originalPath) == [s.path(long)], "\(listed)")
            try await p.undo(record)
            #expect(try await p.contents(path: s.path(long)) == Data("long".utf8))
            #expect(try await collect(trash.items(under: s.base)).isEmpty)
        }
    }

    @Test("tentative records: a change that never happened is left alone; an old file already trashed comes back", arguments: UndoFixture.all)
    func tentativeRecords(fixture: UndoFixture) async throws {
        try await fixture.run { s in
            let p = s.provider
            let trash = try #require(p.trash)
            // Killed after the old file went to the trash, before the new one took the name.
            try await p.writeContents(path: s.path("old.txt"), data: Data("old".utf8))
            let trashed = try await trash.trashItem(at: s.path("old.txt"))
            let overwrite = UndoRecord(operation: .overwrite, path: s.path("old.txt"), trashName: trashed.name, trashVolume: trashed.volume,
                                       expected: ItemIdentity(type: .file, size: 99), isTentative: true)
            try await p.undo(overwrite)
            #expect(try await p.contents(path: s.path("old.txt")) == Data("old".utf8))
            // A creation recorded ahead that never happened, where someone else's file is now: left alone.
            try await p.writeContents(path: s.path("theirs.txt"), data: Data("theirs, not ours".utf8))
            let create = UndoRecord(operation: .create, path: s.path("theirs.txt"), expected: ItemIdentity(type: .file, size: 3), isTentative: true)
            try await p.undo(create)
            #expect(try await p.contents(path: s.path("theirs.txt")) == Data("theirs, not ours".utf8))
            // ... and where nothing is: nothing to do.
            try await p.undo(UndoRecord(operation: .create, path: s.path("never.txt"), expected: ItemIdentity(type: .file, size: 3), isTentative: true))
        }
    }

    @Test("change monitoring reports a trashed item as removed, and nothing of the trash folder", arguments: UndoFixture.all)
    func monitorIgnoresTheTrash(fixture: UndoFixture) async throws {
        try await fixture.run { s in
            let monitor = try #require(s.provider as? any FileProviderMonitor)
            try await s.provider.writeContents(path: s.path("watched.txt"), data: Data("w".utf8))
            let anchor = try await monitor.currentAnchor(at: s.base, recursive: true)
            _ = try await s.provider.removeItemUndoably(path: s.path("watched.txt"), recursive: false)
            var events: [FileChangeEvent] = []
            var next = anchor
            while true {
                let page = try await monitor.changes(since: next, pageSize: 100)
                events += page.events
                next = page.anchor
                if !page.moreComing { break }
            }
            #expect(events.contains { $0.kind == .removed && $0.path == s.path("watched.txt") }, "\(events)")
            #expect(!events.contains { $0.path.contains("gateway-trash") }, "\(events)")
        }
    }

    @Test("with the trash off, removals are permanent and their records say so", arguments: UndoFixture.all)
    func withoutTrash(fixture: UndoFixture) async throws {
        try await fixture.run { s in
            let p = s.withoutTrash
            #expect(p.trash == nil)
            try await p.writeContents(path: s.path("gone.txt"), data: Data("bye".utf8))
            let record = try await p.removeItemUndoably(path: s.path("gone.txt"), recursive: false)
            #expect(record.isPermanent && !record.isUndoable)
            #expect(try await p.itemIfPresent(path: s.path("gone.txt")) == nil)
            await expectFailure(.conflict) { try await p.undo(record) }
            // Moves are still undone without a trash.
            try await p.writeContents(path: s.path("m.txt"), data: Data("m".utf8))
            let move = try await p.moveItemUndoably(path: s.path("m.txt"), to: s.path("n.txt"), overwrite: false)
            try await p.undo(move)
            #expect(try await p.contents(path: s.path("m.txt")) == Data("m".utf8))
            // A file made is not deleted for good by undo when there is no trash to keep it.
            let (_, made) = try await p.writeUndoably(path: s.path("made.txt"), from: ByteStream(data: Data("made".utf8)), options: WriteOptions())
            await expectFailure(.conflict) { try await p.undo(made) }
            #expect(try await p.contents(path: s.path("made.txt")) == Data("made".utf8))
            await expectFailure(.invalidInput) { _ = try await p.moveItemUndoably(path: s.path("m.txt"), to: s.path("m.txt"), overwrite: true) }
            #expect(try await p.contents(path: s.path("m.txt")) == Data("m".utf8), "a move onto itself changes nothing")
        }
    }
}

private func collect<Element>(_ sequence: PullSequence<Element>) async throws -> [Element] {
    var all: [Element] = []
    for try await element in sequence { all.append(element) }
    return all
}
