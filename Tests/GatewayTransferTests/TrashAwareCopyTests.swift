import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// The copy engine and the trash: sync sends what it deletes and replaces to the destination's
/// trash (undone from the records it reports), and never copies, deletes or reports the trash
/// folder or gateway temporaries.
@Suite("Copy engine with the trash")
struct TrashAwareCopyTests {
    final class Records: UndoRecorder, @unchecked Sendable {
        private let lock = NSLock()
        private var items: [UndoRecord] = []
        func record(_ record: UndoRecord, on provider: any FileProviderBasic) -> UndoRecordHandle? {
            lock.withLock {
                items.append(record)
                return UndoRecordHandle(run: 1, sequence: Int64(items.count))
            }
        }
        func confirm(_ handle: UndoRecordHandle) { lock.withLock { items[Int(handle.sequence) - 1].isTentative = false } }
        var all: [UndoRecord] { lock.withLock { items } }
    }

    @Test("sync keeps the trash folder and temporaries at the destination; check reports neither; records undo the run")
    func syncAroundTheTrash() async throws {
        let source = try TemporaryFolder.make()
        let target = try TemporaryFolder.make()
        let home = try TemporaryFolder.make()
        defer { [source, target, home].forEach { $0.remove() } }
        let from = try LocalFileProvider(name: "src", root: source.path, homeTrash: home.path + "/Trash")
        let to = try LocalFileProvider(name: "dst", root: target.path, trash: TrashSettings(folder: ".trash"), homeTrash: home.path + "/Trash")
        try await from.writeContents(path: "/keep.txt", data: Data("new keep".utf8))
        try await to.writeContents(path: "/keep.txt", data: Data("old".utf8))
        try await to.writeContents(path: "/extra.txt", data: Data("extra".utf8))
        try await to.writeContents(path: "/.keep.txt.gateway-abc.partial", data: Data("in progress".utf8))
        try await to.trash!.trashItem(at: "/extra.txt")
        try await to.writeContents(path: "/extra.txt", data: Data("extra again".utf8))

        let records = Records()
        var options = CopyOptions()
        options.undoRecorder = records
        let summary = try await CopyEngine(options: options).run(.sync, from: TransferEndpoint(provider: from, path: "/"),
                                                                to: TransferEndpoint(provider: to, path: "/"))
        #expect(summary.failed == 0 && summary.deleted == 1)
        #expect(try await to.contents(path: "/keep.txt") == Data("new keep".utf8))
        #expect(try await to.itemIfPresent(path: "/.trash") != nil, "the trash folder is not an extra")
        #expect(try await to.itemIfPresent(path: "/.keep.txt.gateway-abc.partial") != nil, "a temporary is not an extra")
        let report = try await CopyEngine().check(source: TransferEndpoint(provider: from, path: "/"), destination: TransferEndpoint(provider: to, path: "/"))
        #expect(report.extra.isEmpty && report.missing.isEmpty && report.different.isEmpty, "\(report)")

        // The reverse copy does not carry the trash or the temporary back.
        let back = try await CopyEngine().run(.copy, from: TransferEndpoint(provider: to, path: "/"), to: TransferEndpoint(provider: from, path: "/"))
        #expect(back.failed == 0)
        #expect(try await from.itemIfPresent(path: "/.trash") == nil)
        #expect(try await from.itemIfPresent(path: "/.keep.txt.gateway-abc.partial") == nil)

        // Undoing the run's records, newest first, puts the destination back as it was.
        #expect(records.all.allSatisfy { !$0.isTentative }, "every change made was confirmed: \(records.all)")
        let kinds = records.all.map(\.operation)
        #expect(kinds.contains(.overwrite) && kinds.contains(.remove), "\(records.all)")
        for record in records.all.reversed() { try await to.undo(record) }
        #expect(try await to.contents(path: "/keep.txt") == Data("old".utf8))
        #expect(try await to.contents(path: "/extra.txt") == Data("extra again".utf8))
    }

    @Test("--no-trash: sync deletes and replaces for good and its records say so")
    func syncWithoutTrash() async throws {
        let source = try TemporaryFolder.make()
        let target = try TemporaryFolder.make()
        let home = try TemporaryFolder.make()
        defer { [source, target, home].forEach { $0.remove() } }
        let from = try LocalFileProvider(name: "src", root: source.path, homeTrash: home.path + "/Trash")
        let to = try LocalFileProvider(name: "dst", root: target.path, homeTrash: home.path + "/Trash")
        try await from.writeContents(path: "/a.txt", data: Data("aaaa".utf8))
        try await to.writeContents(path: "/a.txt", data: Data("a".utf8))
        try await to.writeContents(path: "/b.txt", data: Data("b".utf8))
        let records = Records()
        var options = CopyOptions()
        options.useTrash = false
        options.undoRecorder = records
        _ = try await CopyEngine(options: options).run(.sync, from: TransferEndpoint(provider: from, path: "/"), to: TransferEndpoint(provider: to, path: "/"))
        #expect(records.all.allSatisfy { $0.isPermanent }, "\(records.all)")
        #expect(records.all.count == 2)
        #expect(!FileManager.default.fileExists(atPath: home.path + "/Trash/files"), "nothing went to the trash")
    }
}
