import GatewayCore
@testable import GatewayMount
import Testing

@Suite("The mount's inode table")
struct InodeTableTests {
    static func file(_ path: String) -> FileObject { FileObject(path: path, type: .file, size: 1) }
    static func folder(_ path: String) -> FileObject { FileObject(path: path, type: .directory) }

    @Test("inodes live while the kernel holds them: forget drops them, paths come from the links")
    func kernelReferences() {
        var table = InodeTable(rootPath: "/r", rootItem: Self.folder("/r"))
        let folder = table.remember(Self.folder("/r/a"), as: "a", in: InodeTable.root)
        let file = table.remember(Self.file("/r/a/f"), as: "f", in: folder)
        #expect(table.path(of: file) == "/r/a/f")
        #expect(table.remember(Self.file("/r/a/f"), as: "f", in: folder) == file, "the same name keeps its inode")
        table.forget(file, count: 1)
        #expect(table.path(of: file) == "/r/a/f", "one reference left")
        table.forget(file, count: 1)
        #expect(table.node(file) == nil && table.inode(of: "f", in: folder) == nil)
        table.forget(folder, count: 1)
        #expect(table.count == 1, "only the root is left")
    }

    @Test("a held inode keeps its path after the kernel forgot it and its folder; released, both go")
    func heldInodes() {
        var table = InodeTable(rootPath: "/", rootItem: Self.folder("/"))
        let folder = table.remember(Self.folder("/a"), as: "a", in: InodeTable.root)
        let file = table.remember(Self.file("/a/f"), as: "f", in: folder)
        table.hold(file)
        table.forget(file, count: 1)
        table.forget(folder, count: 1)
        #expect(table.path(of: file) == "/a/f", "the folder stays while a held file is in it")
        // Renamed by the mount (a conflict copy) into another folder: the old folder may go.
        let other = table.remember(Self.folder("/b"), as: "b", in: InodeTable.root)
        table.move(file, to: "f (conflict)", in: other)
        #expect(table.node(folder) == nil, "nothing keeps the old folder now")
        table.forget(other, count: 1)
        #expect(table.path(of: file) == "/b/f (conflict)")
        table.release(file)
        #expect(table.node(file) == nil && table.node(other) == nil && table.count == 1)
    }
}

@Suite("Folders the mount made")
struct KnownFoldersTests {
    @Test("a made folder knows its names: others are absent; removed names are absent again; too many names let it go")
    func knownNames() {
        var known = KnownFolders()
        #expect(!known.isAbsent("x", in: 5), "an unknown folder knows nothing")
        known.made(5)
        #expect(known.isAbsent("x", in: 5))
        known.add("x", in: 5)
        #expect(!known.isAbsent("x", in: 5) && known.isAbsent("y", in: 5))
        known.remove("x", in: 5)
        #expect(known.isAbsent("x", in: 5))
        known.add("z", in: 6)
        #expect(!known.isAbsent("z", in: 6), "names added to an unknown folder are not tracked")
        for index in 0...KnownFolders.limit { known.add("n\(index)", in: 5) }
        #expect(!known.isAbsent("never", in: 5), "past the limit the folder is let go: lookups ask the remote")
        known.made(7)
        known.forget(7)
        #expect(!known.isAbsent("x", in: 7))
    }
}
