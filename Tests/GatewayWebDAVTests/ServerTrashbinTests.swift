import Foundation
@testable import GatewayTestSupport
@testable import GatewayWebDAV
import StorageGateway
import Testing

/// Nextcloud and ownCloud remotes use the server's own trash bin for undo and `gateway trash`. No
/// Nextcloud or ownCloud runs in the test environment, so these talk to ``TrashbinDAVServer``,
/// which follows the documented WebDAV trash bin API of each.
@Suite("WebDAV: Nextcloud/ownCloud's own trash bin")
struct ServerTrashbinTests {
    static func provider(_ server: TrashbinDAVServer, root: String = "/", trashDir: String? = nil) throws -> WebDAVProvider {
        let configuration = HTTPClientConfiguration(baseURL: URL(string: server.webDAVURL(root: root))!, remoteName: "cloud",
                                                    user: server.user, password: server.password)
        let vendor: WebDAVProvider.Vendor = server.dialect == .nextcloud ? .nextcloud : .owncloud
        return WebDAVProvider(configuration: configuration, vendor: vendor, atomicPut: .always,
                              trash: TrashSettings(folder: trashDir),
                              stateDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("trashbin-\(UUID().uuidString)"))
    }

    static func write(_ provider: WebDAVProvider, _ path: String, _ text: String) async throws {
        _ = try await provider.write(path: path, from: ByteStream(data: Data(text.utf8)), options: WriteOptions(overwrite: true, atomically: false))
    }

    static func read(_ provider: WebDAVProvider, _ path: String) async throws -> String {
        String(decoding: try await provider.readStream(path: path, options: ReadOptions()).collect(limit: 1 << 20), as: UTF8.self)
    }

    static func items(_ trash: Trash) async throws -> [TrashedItem] {
        var items: [TrashedItem] = []
        for try await item in trash.items() { items.append(item) }
        return items
    }

    @Test("remove puts the item in the server's trash bin (one DELETE), undo restores it byte-equal",
          arguments: [TrashbinDAVServer.Dialect.nextcloud, .owncloud])
    func removeAndUndo(_ dialect: TrashbinDAVServer.Dialect) async throws {
        let server = try TrashbinDAVServer(dialect)
        defer { server.stop() }
        let provider = try Self.provider(server, root: "/Docs/")
        let setup = try Self.provider(server)
        try await setup.createFolder(path: "/Docs/tree/inner", withIntermediateDirectories: true)
        try await Self.write(setup, "/Docs/report 1.txt", "first report")
        try await Self.write(setup, "/Docs/tree/inner/deep.txt", "deep")
        let trash = try #require(provider.trash)
        #expect(trash.locator is ServerTrashLocator, "the server's trash bin, not a trash folder")

        let file = try await provider.removeItemUndoably(path: "/report 1.txt", recursive: false)
        #expect(!server.exists("/Docs/report 1.txt"))
        #expect(server.trashbin.map(\.location) == ["Docs/report 1.txt"], "in the server's trash bin, where its web interface shows it")
        #expect(server.requests.filter { $0.method == "DELETE" }.count == 1)
        #expect(!server.requests.contains { $0.path.contains(".gateway-trash") }, "no gateway trash folder")
        let tree = try await provider.removeItemUndoably(path: "/tree", recursive: true)
        #expect(server.trashbin.count == 2 && !server.exists("/Docs/tree/inner/deep.txt"))

        let listed = try await Self.items(trash)
        #expect(Set(listed.compactMap(\.originalPath)) == ["/report 1.txt", "/tree"], "original paths are the remote's")
        #expect(listed.first { $0.originalPath == "/report 1.txt" }?.size == 12)
        #expect(listed.allSatisfy { $0.deletionDate.map { abs($0.timeIntervalSinceNow) < 60 } == true })

        try await provider.undo(tree)
        try await provider.undo(file)
        #expect(server.file("/Docs/report 1.txt") == Array("first report".utf8))
        #expect(server.file("/Docs/tree/inner/deep.txt") == Array("deep".utf8))
        #expect(server.trashbin.isEmpty)
    }

    @Test("an overwrite sends the previous content to the trash bin; undo puts it back (the same name trashed twice in a second)",
          arguments: [(TrashbinDAVServer.Dialect.nextcloud, true), (.nextcloud, false), (.owncloud, true)])
    func overwriteAndUndo(_ dialect: TrashbinDAVServer.Dialect, fileIDs: Bool) async throws {
        let server = try TrashbinDAVServer(dialect, trashbinFileIDs: fileIDs)
        defer { server.stop() }
        let provider = try Self.provider(server)
        try await Self.write(provider, "/a.txt", "old")
        var options = WriteOptions(overwrite: true, atomically: true)
        options.returnsStoredAttributes = false
        let (_, record) = try await provider.writeUndoably(path: "/a.txt", from: ByteStream(data: Data("new".utf8)), options: options)
        #expect(record.operation == .overwrite)
        #expect(try await Self.read(provider, "/a.txt") == "new")
        #expect(server.trashbin.map(\.location) == ["a.txt"])
        try await provider.undo(record)
        #expect(try await Self.read(provider, "/a.txt") == "old")
        // Undo sent the newer content to the trash bin too: nothing was replaced there.
        #expect(server.trashbin.count == 1)
        let bin = try #require(provider.trash)
        let newer = try #require(try await Self.items(bin).first)
        #expect(newer.size == 3 && newer.originalPath == "/a.txt")
    }

    @Test("a trash folder used before the vendor was set still restores, is listed, and is skipped by copies")
    func earlierTrashFolder() async throws {
        let server = try TrashbinDAVServer(.nextcloud)
        defer { server.stop() }
        let before = try Self.provider(server, trashDir: ".gateway-trash")
        try await Self.write(before, "/old.txt", "kept in the folder")
        let record = try await before.removeItemUndoably(path: "/old.txt", recursive: false)
        let now = try Self.provider(server)
        let trash = try #require(now.trash)
        #expect(Set(try await Self.items(trash).compactMap(\.originalPath)) == ["/old.txt"])
        #expect(await trash.folderPaths() == ["/.gateway-trash"], "copies skip it")
        try await now.undo(record)
        #expect(try await Self.read(now, "/old.txt") == "kept in the folder")
    }

    @Test("trash list, restore elsewhere, empty --older-than; items outside the remote's root are not listed")
    func listRestoreEmpty() async throws {
        let server = try TrashbinDAVServer(.nextcloud)
        defer { server.stop() }
        let provider = try Self.provider(server, root: "/Docs")
        let setup = try Self.provider(server)
        try await setup.createFolder(path: "/Docs/sub", withIntermediateDirectories: true)
        let old = Int64(Date().timeIntervalSince1970) - 40 * 86_400
        server.plant(name: "old.txt.d\(old)", location: "Docs/old.txt", content: "old", deleted: old)
        server.plant(name: "elsewhere.txt.d\(old)", location: "Photos/elsewhere.txt", content: "x", deleted: old)
        server.plant(name: "fresh.txt.d\(old + 30 * 86_400)", location: "Docs/fresh.txt", content: "fresh", deleted: old + 30 * 86_400)
        let trash = try #require(provider.trash)
        let listed = try await Self.items(trash)
        #expect(Set(listed.compactMap(\.originalPath)) == ["/old.txt", "/fresh.txt"], "Photos/ lies outside the remote")

        // Restore to another path: Nextcloud puts it back where it was, then it is moved on.
        let fresh = try #require(listed.first { $0.originalPath == "/fresh.txt" })
        try await trash.restore(fresh, to: "/sub/fresh copy.txt")
        #expect(try await Self.read(provider, "/sub/fresh copy.txt") == "fresh")
        #expect(!server.exists("/Docs/fresh.txt"))
        // Over an existing item: refused, nothing changes.
        let oldItem = try #require(listed.first { $0.originalPath == "/old.txt" })
        try await Self.write(provider, "/taken.txt", "mine")
        await #expect(throws: (any Error).self) { try await trash.restore(oldItem, to: "/taken.txt") }
        #expect(try await Self.read(provider, "/taken.txt") == "mine")
        #expect(server.trashbin.count == 2)

        let removed = try await trash.empty(olderThan: Date().addingTimeInterval(-7 * 86_400))
        #expect(removed == 1)
        #expect(server.trashbin.map(\.location) == ["Photos/elsewhere.txt"], "only this remote's old item went")
    }

    @Test("the vendor's claimed setModificationDate works: PROPPATCH of DAV:lastmodified, and X-OC-Mtime on a write",
          arguments: [TrashbinDAVServer.Dialect.nextcloud, .owncloud])
    func modificationTimes(dialect: TrashbinDAVServer.Dialect) async throws {
        let server = try TrashbinDAVServer(dialect)
        defer { server.stop() }
        let provider = try Self.provider(server)
        #expect(provider.capabilities.supports(.setModificationDate))
        try await Self.write(provider, "/a.txt", "a")
        let stamp = Date(timeIntervalSince1970: 1_600_000_000)
        try await provider.setModificationDate(stamp, path: "/a.txt")
        #expect(try await provider.attributesOfItem(path: "/a.txt").modificationDate == stamp)
        // A write that carries the source's time.
        let older = Date(timeIntervalSince1970: 1_500_000_000)
        _ = try await provider.write(path: "/b.txt", from: ByteStream(data: Data("b".utf8)),
                                     options: WriteOptions(overwrite: true, modificationDate: older))
        #expect(try await provider.attributesOfItem(path: "/b.txt").modificationDate == older)
        await expectFailure(.notFound) { try await provider.setModificationDate(stamp, path: "/missing.txt") }
    }

    @Test("with the trash bin app off, nothing is deleted and the error says what to set")
    func trashbinOff() async throws {
        let server = try TrashbinDAVServer(.nextcloud, trashbinEnabled: false)
        defer { server.stop() }
        let provider = try Self.provider(server)
        try await Self.write(provider, "/keep.txt", "keep")
        await #expect(throws: (any Error).self) { _ = try await provider.removeItemUndoably(path: "/keep.txt", recursive: false) }
        do {
            _ = try await provider.removeItemUndoably(path: "/keep.txt", recursive: false)
        } catch {
            #expect("\(error)".contains("trash_dir"), "\(error)")
        }
        #expect(server.file("/keep.txt") == Array("keep".utf8))
        #expect(!server.requests.contains { $0.method == "DELETE" })
    }

    @Test("a trash bin entry's record: hostile times are no date, never a trap; no location is no record")
    func hostileRecords() {
        func date(_ text: String) -> Date? {
            var resource = DAVResource()
            resource.trashbinLocation = "Docs/a.txt"
            resource.trashbinDeleted = text
            return ServerTrashbin.info(resource)?.deletionDate
        }
        #expect(date("1732500000") == Date(timeIntervalSince1970: 1_732_500_000))
        #expect(date("1732500000.75") == Date(timeIntervalSince1970: 1_732_500_000))
        for hostile in ["inf", "-inf", "nan", "1e400", "-5", "9223372036854775807", "99999999999999999999", "", "x"] {
            #expect(date(hostile) == nil, "\(hostile)")
        }
        var resource = DAVResource()
        resource.trashbinDeleted = "1732500000"
        #expect(ServerTrashbin.info(resource) == nil, "no original location")
        resource.trashbinLocation = "/already/absolute"
        #expect(ServerTrashbin.info(resource)?.path == "/already/absolute")
    }

    @Test("trash_dir asks for a trash folder instead; plain WebDAV never uses a trash bin")
    func trashDirWins() async throws {
        let server = try TrashbinDAVServer(.nextcloud)
        defer { server.stop() }
        let provider = try Self.provider(server, trashDir: ".gateway-trash")
        #expect(provider.trash?.locator is ProviderTrashVolume)
        let plain = WebDAVProvider(configuration: HTTPClientConfiguration(baseURL: URL(string: server.webDAVURL())!, remoteName: "p",
                                                                          user: server.user, password: server.password))
        #expect(plain.trash?.locator is ProviderTrashVolume)
        let webdavEndpoint = WebDAVProvider(
            configuration: HTTPClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(server.port)/remote.php/webdav/")!,
                                                   remoteName: "w", user: "alice", password: "alice-Nc-Pa55word"),
            vendor: .nextcloud)
        #expect(webdavEndpoint.trash?.locator is ProviderTrashVolume,
                "remote.php/webdav names no user id (a login name may differ): the gateway's trash folder")
    }
}
