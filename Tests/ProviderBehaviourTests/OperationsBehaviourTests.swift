import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

@Suite("Folder, copy, move and delete operations")
struct OperationsBehaviourTests {
    @Test("mkdir creates nested folders with parents; without, a missing parent or existing folder fails", arguments: ProviderFixture.all)
    func makeFolders(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.createFolder(path: s.path("a/b/c"), withIntermediateDirectories: true)
            #expect(try await s.provider.attributesOfItem(path: s.path("a/b/c")).type == .directory)
            try await s.provider.createFolder(path: s.path("a/b/c"), withIntermediateDirectories: true)
            await expectFailure(.alreadyExists) {
                try await s.provider.createFolder(path: s.path("a/b"), withIntermediateDirectories: false)
            }
            do {
                try await s.provider.createFolder(path: s.path("x/y"), withIntermediateDirectories: false)
                Issue.record("creating a folder under a missing parent must fail")
            } catch {
                #expect(error.failureKind == .notFound, "got \(error)")
                #expect(ErrorMessage.reason(for: error).count < 120)
            }
        }
    }

    @Test("copy duplicates a file and a tree; the source stays", arguments: ProviderFixture.all)
    func copyItems(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            let data = Bytes.pattern(70_000)
            try await s.provider.createFolder(path: s.path("tree/sub/empty"), withIntermediateDirectories: true)
            try await s.provider.writeContents(path: s.path("tree/f.bin"), data: data)
            try await s.provider.writeContents(path: s.path("tree/sub/g.txt"), data: Data("g".utf8))
            try await s.provider.copyItem(path: s.path("tree/f.bin"), to: s.path("copy.bin"), overwrite: false, progress: nil)
            #expect(try await s.provider.contents(path: s.path("copy.bin")) == data)
            #expect(try await s.provider.contents(path: s.path("tree/f.bin")) == data)
            await expectFailure(.alreadyExists) {
                try await s.provider.copyItem(path: s.path("tree/f.bin"), to: s.path("copy.bin"), overwrite: false, progress: nil)
            }
            try await s.provider.copyItem(path: s.path("tree"), to: s.path("tree2"), overwrite: false, progress: nil)
            #expect(try await s.provider.contents(path: s.path("tree2/sub/g.txt")) == Data("g".utf8))
            #expect(try await s.provider.contents(path: s.path("tree2/f.bin")) == data)
            #expect(try await s.provider.attributesOfItem(path: s.path("tree2/sub/empty")).type == .directory)
        }
    }

    @Test("move renames files and folders; refuses to overwrite when asked", arguments: ProviderFixture.all)
    func moveItems(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.writeContents(path: s.path("m1.txt"), data: Data("one".utf8))
            try await s.provider.writeContents(path: s.path("m2.txt"), data: Data("two".utf8))
            await expectFailure(.alreadyExists) {
                try await s.provider.moveItem(path: s.path("m1.txt"), to: s.path("m2.txt"), overwrite: false)
            }
            #expect(try await s.provider.contents(path: s.path("m1.txt")) == Data("one".utf8))
            try await s.provider.moveItem(path: s.path("m1.txt"), to: s.path("m2.txt"), overwrite: true)
            #expect(try await s.provider.contents(path: s.path("m2.txt")) == Data("one".utf8))
            await expectFailure(.notFound) { _ = try await s.provider.attributesOfItem(path: s.path("m1.txt")) }

            try await s.provider.createFolder(path: s.path("dir/inner"), withIntermediateDirectories: true)
            try await s.provider.writeContents(path: s.path("dir/inner/x"), data: Data("x".utf8))
            try await s.provider.moveItem(path: s.path("dir"), to: s.path("renamed dir"), overwrite: false)
            #expect(try await s.provider.contents(path: s.path("renamed dir/inner/x")) == Data("x".utf8))
            await expectFailure(.notFound) { _ = try await s.provider.attributesOfItem(path: s.path("dir")) }
            await expectFailure(.notFound) {
                try await s.provider.moveItem(path: s.path("ghost"), to: s.path("ghost2"), overwrite: true)
            }
        }
    }

    @Test("copy and move onto a folder the item is in, or into itself, are refused and lose nothing", arguments: ProviderFixture.all)
    func overlappingTransfers(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.createFolder(path: s.path("a/b"), withIntermediateDirectories: true)
            try await s.provider.writeContents(path: s.path("a/b/x"), data: Data("x".utf8))
            try await s.provider.writeContents(path: s.path("a/f"), data: Data("f".utf8))
            for overwrite in [false, true] {
                // Onto an ancestor: replacing it first would delete the source with it.
                await expectFailure(.invalidInput) { try await s.provider.moveItem(path: s.path("a/b"), to: s.path("a"), overwrite: overwrite) }
                await expectFailure(.invalidInput) { try await s.provider.moveItem(path: s.path("a/f"), to: s.path("a"), overwrite: overwrite) }
                await expectFailure(.invalidInput) {
                    try await s.provider.copyItem(path: s.path("a/b"), to: s.path("a"), overwrite: overwrite, progress: nil)
                }
                // Into itself: it would never end.
                await expectFailure(.invalidInput) { try await s.provider.moveItem(path: s.path("a"), to: s.path("a/b/c"), overwrite: overwrite) }
                await expectFailure(.invalidInput) {
                    try await s.provider.copyItem(path: s.path("a"), to: s.path("a/b/c"), overwrite: overwrite, progress: nil)
                }
                await expectFailure(.invalidInput) {
                    try await s.provider.copyItem(path: s.path("a/f"), to: s.path("a/f"), overwrite: overwrite, progress: nil)
                }
                // A move onto itself does nothing.
                try await s.provider.moveItem(path: s.path("a/b"), to: s.path("a/b"), overwrite: overwrite)
            }
            #expect(try await s.provider.contents(path: s.path("a/b/x")) == Data("x".utf8))
            #expect(try await s.provider.contents(path: s.path("a/f")) == Data("f".utf8))
            #expect(try await s.provider.itemIfPresent(path: s.path("a/b/c")) == nil)
            #expect(try await s.provider.contentsOfDirectory(path: s.path("a")).collectAll().map(\.name).sorted() == ["b", "f"])
        }
    }

    @Test("remove deletes files and, recursively, trees; a non-empty folder needs recursive", arguments: ProviderFixture.all)
    func removeItems(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.createFolder(path: s.path("r/a/b"), withIntermediateDirectories: true)
            try await s.provider.writeContents(path: s.path("r/a/b/f"), data: Data("f".utf8))
            try await s.provider.writeContents(path: s.path("r/top"), data: Data("t".utf8))
            try await s.provider.removeItem(path: s.path("r/top"), recursive: false)
            await expectFailure(.notFound) { _ = try await s.provider.attributesOfItem(path: s.path("r/top")) }
            do {
                try await s.provider.removeItem(path: s.path("r"), recursive: false)
                Issue.record("removing a non-empty folder without recursive must fail")
            } catch {
                #expect([.directoryNotEmpty, .conflict, .permissionDenied].contains(error.failureKind), "got \(error)")
            }
            #expect(try await s.provider.contents(path: s.path("r/a/b/f")) == Data("f".utf8))
            try await s.provider.removeItem(path: s.path("r"), recursive: true)
            await expectFailure(.notFound) { _ = try await s.provider.attributesOfItem(path: s.path("r")) }
            await expectFailure(.notFound) { try await s.provider.removeItem(path: s.path("r"), recursive: true) }
        }
    }

    @Test("upload from and download to local files, atomically", arguments: ProviderFixture.all)
    func uploadDownload(fixture: ProviderFixture) async throws {
        let local = try TemporaryFolder.make()
        defer { local.remove() }
        let data = Bytes.pattern(3 * 1024 * 1024 + 5)
        let source = URL(fileURLWithPath: local.path + "/up.bin")
        try data.write(to: source)
        try await fixture.run { s in
            let progress = TransferProgress()
            try await s.provider.uploadItem(from: source, to: s.path("up.bin"), overwrite: false, progress: progress)
            #expect(progress.snapshot.completedBytes == Int64(data.count))
            let target = URL(fileURLWithPath: local.path + "/down.bin")
            try await s.provider.downloadItem(path: s.path("up.bin"), to: target, overwrite: false, progress: nil)
            #expect(try Data(contentsOf: target) == data)
            await expectFailure(.alreadyExists) {
                try await s.provider.downloadItem(path: s.path("up.bin"), to: target, overwrite: false, progress: nil)
            }
            await expectFailure(.notFound) {
                try await s.provider.downloadItem(path: s.path("missing"), to: URL(fileURLWithPath: local.path + "/m"), overwrite: true, progress: nil)
            }
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: local.path).sorted()
            #expect(leftovers == ["down.bin", "up.bin"])
        }
    }

    @Test("copies between two providers stream through Transfer", arguments: ProviderFixture.all)
    func crossProviderTransfer(fixture: ProviderFixture) async throws {
        let other = try TemporaryFolder.make()
        defer { other.remove() }
        let local = try LocalFileProvider(name: "other", root: other.path)
        try await fixture.run { s in
            try await s.provider.createFolder(path: s.path("src/sub/empty"), withIntermediateDirectories: true)
            try await s.provider.writeContents(path: s.path("src/sub/a b.txt"), data: Data("ab".utf8))
            try await s.provider.writeContents(path: s.path("src/big"), data: Bytes.pattern(2_000_000))
            let summary = try await CopyEngine().run(.copy, from: TransferEndpoint(provider: s.provider, path: s.path("src")),
                                                     to: TransferEndpoint(provider: local, path: "/dst"))
            #expect(summary.failed == 0)
            #expect(summary.copied == 2)
            #expect(try await local.contents(path: "/dst/sub/a b.txt") == Data("ab".utf8))
            #expect(try await local.contents(path: "/dst/big") == Bytes.pattern(2_000_000))
            #expect(try await local.attributesOfItem(path: "/dst/sub/empty").isDirectory)
            // And back.
            try await Transfer.copyFile(from: TransferEndpoint(provider: local, path: "/dst/big"),
                                        to: TransferEndpoint(provider: s.provider, path: s.path("back")))
            #expect(try await s.provider.contents(path: s.path("back")) == Bytes.pattern(2_000_000))
        }
    }
}
