import Foundation
import GatewayCore
@testable import GatewayState
import Testing

/// The mount's upload queue: what each cache folder owes, following renames of files and of the
/// folders above them, never touching look-alike names or another cache folder's rows; and the
/// batch reads of the dead-property store the WebDAV client's local stamps use.
@Suite("Mount upload queue")
struct UploadQueueTests {
    @Test("record, rename a file and a folder above others, remove; look-alike names and other cache folders stay")
    func followsRenames() throws {
        let folder = try StateStoreTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let queue = try UploadQueue.open(directory: URL(fileURLWithPath: folder), cacheFolder: "/cache/a")
        let other = try UploadQueue.open(directory: URL(fileURLWithPath: folder), cacheFolder: "/cache/b")
        let time = Date(timeIntervalSince1970: 1_700_000_000.5)
        try queue.record(.init(cacheFile: "1", remote: "dav", path: "/d/f", modificationDate: time), date: Date(timeIntervalSince1970: 1))
        try queue.record(.init(cacheFile: "2", remote: "dav", path: "/d/sub/g", modificationDate: nil), date: Date(timeIntervalSince1970: 2))
        try queue.record(.init(cacheFile: "3", remote: "dav", path: "/d0", modificationDate: nil), date: Date(timeIntervalSince1970: 3))
        try other.record(.init(cacheFile: "1", remote: "ftp", path: "/d/f", modificationDate: nil))
        #expect(try queue.entries().map(\.path) == ["/d/f", "/d/sub/g", "/d0"], "oldest first")
        #expect(try queue.entries().first?.modificationDate == time)

        try queue.move(from: "/d", to: "/e")
        #expect(try queue.entries().map(\.path) == ["/e/f", "/e/sub/g", "/d0"])
        try queue.move(from: "/e/f", to: "/top")
        #expect(try queue.entries().map(\.path) == ["/top", "/e/sub/g", "/d0"])
        // Recording again replaces the row (a file closed again, or renamed).
        try queue.record(.init(cacheFile: "2", remote: "dav", path: "/again", modificationDate: nil), date: Date(timeIntervalSince1970: 2))
        #expect(try queue.entries().map(\.path) == ["/top", "/again", "/d0"])
        try queue.remove(cacheFile: "1")
        try queue.remove(cacheFile: "missing")
        #expect(try queue.entries().map(\.cacheFile) == ["2", "3"])
        #expect(try other.entries() == [.init(cacheFile: "1", remote: "ftp", path: "/d/f", modificationDate: nil)])
    }

    @Test("the dead-property store reads one property of many items at once and sets many in one transaction")
    func batches() throws {
        let folder = try StateStoreTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try DeadPropertyStore.open(directory: URL(fileURLWithPath: folder), scope: "source-stamps x")
        let properties = (0..<300).map { (path: "/f\($0)", property: DeadProperty(namespace: "urn:x", name: "stamp", value: "v\($0)")) }
        try store.set(properties)
        try store.update("/f1", [.set(DeadProperty(namespace: "urn:x", name: "other", value: "o"))])
        let read = try store.values(namespace: "urn:x", name: "stamp", of: ["/f0", "/f1", "/f299", "/absent"])
        #expect(read == ["/f0": "v0", "/f1": "v1", "/f299": "v299"])
        #expect(try store.values(namespace: "urn:x", name: "other", of: (0..<300).map { "/f\($0)" }) == ["/f1": "o"])
    }
}
