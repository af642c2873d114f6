import Foundation
import GatewayCore
import GatewayState
import Testing

@Suite("mount.sqlite: kept listings, the offline journal, saved anchors")
struct MountStateTests {
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mountstate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("a kept listing is read back, kept true by puts and removals (a folder's subtree goes with it), per cache folder")
    func listings() throws {
        let state = try Self.folder()
        defer { try? FileManager.default.removeItem(at: state) }
        let listings = try FolderListings.open(directory: state, cacheFolder: "/cache/a")
        let other = try FolderListings.open(directory: state, cacheFolder: "/cache/b")
        #expect(try listings.items(in: "/r") == nil, "never listed")
        try listings.replace(folder: "/r", with: [FileObject(path: "/r/a.txt", type: .file, size: 3, versionTag: "v1"),
                                                  FileObject(path: "/r/sub", type: .directory)])
        try listings.replace(folder: "/r/sub", with: [FileObject(path: "/r/sub/deep", type: .file, size: 1)])
        #expect(try listings.items(in: "/r")?.map(\.name) == ["a.txt", "sub"])
        #expect(try listings.item(named: "a.txt", in: "/r")??.versionTag == "v1")
        #expect(try listings.item(named: "missing", in: "/r") == .some(nil), "a stored folder without the name")
        #expect(try listings.item(named: "a.txt", in: "/elsewhere") == nil, "a folder never stored")
        #expect(try other.items(in: "/r") == nil, "another cache folder's listings are its own")
        try listings.apply([.put(FileObject(path: "/r/b.txt", type: .file, size: 5)), .put(FileObject(path: "/nowhere/c", type: .file)),
                            .remove("/r/sub"), .emptyFolder("/r/made")])
        #expect(try listings.items(in: "/r")?.map(\.name) == ["a.txt", "b.txt"])
        #expect(try listings.items(in: "/r/sub") == nil, "a removed folder's own listing goes too")
        #expect(try listings.items(in: "/nowhere") == nil, "a put into a folder never listed is dropped")
        #expect(try listings.items(in: "/r/made") == [], "a folder made empty is known empty")

        // A folder renamed takes the listings under it along (names with non-ASCII letters too);
        // what the target held goes.
        try listings.replace(folder: "/r/café", with: [FileObject(path: "/r/café/x", type: .file, size: 1),
                                                        FileObject(path: "/r/café/in", type: .directory)])
        try listings.replace(folder: "/r/café/in", with: [FileObject(path: "/r/café/in/y", type: .file, size: 2)])
        try listings.replace(folder: "/r", with: [FileObject(path: "/r/café", type: .directory), FileObject(path: "/r/old", type: .directory)])
        try listings.replace(folder: "/r/old", with: [FileObject(path: "/r/old/gone", type: .file, size: 1)])
        try listings.replace(folder: "/r/caféteria", with: [FileObject(path: "/r/caféteria/z", type: .file, size: 1)])
        try listings.apply([.move("/r/café", to: "/r/old")])
        #expect(try listings.items(in: "/r")?.map(\.name) == ["old"])
        #expect(try listings.items(in: "/r/old")?.map(\.path) == ["/r/old/in", "/r/old/x"])
        #expect(try listings.items(in: "/r/old/in")?.map(\.path) == ["/r/old/in/y"])
        #expect(try listings.items(in: "/r/café") == nil && listings.items(in: "/r/café/in") == nil)
        #expect(try listings.items(in: "/r/caféteria")?.map(\.name) == ["z"], "a sibling sharing the prefix stays")
    }

    @Test("the offline journal gives its changes back in order until each is removed")
    func journal() throws {
        let state = try Self.folder()
        defer { try? FileManager.default.removeItem(at: state) }
        let journal = try ChangeJournal.open(directory: state, cacheFolder: "/cache/a")
        try journal.append(.init(kind: .createFolder, path: "/d", isFolder: true))
        try journal.append(.init(kind: .rename, path: "/a", target: "/d/a"))
        try journal.append(.init(kind: .remove, path: "/b", version: "v7"))
        let changes = try journal.changes()
        #expect(changes.map(\.kind) == [.createFolder, .rename, .remove])
        #expect(changes[1].target == "/d/a" && changes[2].version == "v7" && changes[0].isFolder)
        try journal.remove(changes[0].sequence)
        let reopened = try ChangeJournal.open(directory: state, cacheFolder: "/cache/a")
        #expect(try reopened.changes().map(\.path) == ["/a", "/b"], "kept in the state store, in order")
        try reopened.append(.init(kind: .remove, path: "/c"))
        #expect(try reopened.changes().map(\.path) == ["/a", "/b", "/c"])
    }

    @Test("a saved anchor is given back only for the same remote and folder")
    func anchors() throws {
        let state = try Self.folder()
        defer { try? FileManager.default.removeItem(at: state) }
        let anchors = try MountAnchors.open(directory: state, cacheFolder: "/cache/a")
        let anchor = SyncAnchor(rawValue: Data([1, 2, 3, 0, 255]))
        try anchors.save(anchor, remote: "dav", root: "/photos")
        #expect(try anchors.anchor(remote: "dav", root: "/photos") == anchor)
        #expect(try anchors.anchor(remote: "dav", root: "/other") == nil)
        #expect(try anchors.anchor(remote: "ftp", root: "/photos") == nil)
        try anchors.clear()
        #expect(try anchors.anchor(remote: "dav", root: "/photos") == nil)
    }
}
