import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Local's trash is the desktop's (FreeDesktop.org Trash specification): the home trash for the
/// home file system, `$topdir/.Trash-$uid` (or an administrator's sticky `$topdir/.Trash/$uid`) on
/// others; trash-cli and the gateway read each other's items.
@Suite("Local trash (FreeDesktop)", .serialized)
struct LocalTrashTests {
    struct Scratch {
        let root: TemporaryFolder
        let home: TemporaryFolder
        let provider: LocalFileProvider
        var homeTrash: String { home.path + "/Trash" }
        func host(_ path: String) -> String { root.path + path }
    }

    func withScratch(_ body: (Scratch) async throws -> Void) async throws {
        let root = try TemporaryFolder.make(prefix: "gateway-trash-root")
        let home = try TemporaryFolder.make(prefix: "gateway-trash-home")
        defer {
            root.remove()
            home.remove()
        }
        let provider = try LocalFileProvider(name: "trash", root: root.path, homeTrash: home.path + "/Trash")
        try await body(Scratch(root: root, home: home, provider: provider))
    }

    /// Runs a trash-cli tool with the scratch's home trash as the desktop's.
    func trashCLI(_ tool: String, _ arguments: [String], dataHome: String) throws -> String {
        let result = try ChildProcess.run("/usr/bin/" + tool, arguments,
                                          environment: ProcessInfo.processInfo.environment.merging(["XDG_DATA_HOME": dataHome]) { $1 })
        #expect(result.status == 0, "\(tool) failed: \(String(decoding: result.stderr, as: UTF8.self))")
        return String(decoding: result.stdout, as: UTF8.self)
    }

    @Test("the home trash: files/ and info/NAME.trashinfo with the absolute path; a second item of one name gets NAME.2")
    func homeTrashLayout() async throws {
        try await withScratch { s in
            try await s.provider.writeContents(path: "/a b.txt", data: Data("one".utf8))
            let first = try await s.provider.removeItemUndoably(path: "/a b.txt", recursive: false)
            try await s.provider.writeContents(path: "/a b.txt", data: Data("two".utf8))
            let second = try await s.provider.removeItemUndoably(path: "/a b.txt", recursive: false)
            #expect(first.trashName == "a b.txt" && second.trashName == "a b.txt.2")
            #expect(first.trashVolume == s.homeTrash)
            let info = try String(contentsOfFile: s.homeTrash + "/info/a b.txt.trashinfo", encoding: .utf8)
            #expect(info.hasPrefix("[Trash Info]\nPath=\(TrashInfoEncoding.encode(s.host("/a b.txt")))\nDeletionDate="), "\(info)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: s.homeTrash + "/files/a b.txt.2")) == Data("two".utf8))
            var mode = stat()
            #expect(stat(s.homeTrash, &mode) == 0 && mode.st_mode & 0o777 == 0o700, "the trash is private")
        }
    }

    @Test("an undoable overwrite of a symbolic link replaces the link, not its target; undo brings the link back")
    func overwriteThroughLink() async throws {
        try await withScratch { s in
            try await s.provider.writeContents(path: "/target.txt", data: Data("target".utf8))
            #expect(symlink("target.txt", s.host("/link.txt")) == 0)
            let (_, record) = try await s.provider.writeUndoably(path: "/link.txt", from: ByteStream(data: Data("new".utf8)), options: WriteOptions())
            #expect(try await s.provider.contents(path: "/target.txt") == Data("target".utf8), "the link's target is untouched")
            #expect(try await s.provider.attributesOfItem(path: "/link.txt").type == .file)
            try await s.provider.undo(record)
            #expect(try await s.provider.attributesOfItem(path: "/link.txt").type == .symbolicLink)
            #expect(try await s.provider.contents(path: "/link.txt") == Data("target".utf8))
        }
    }

    @Test("records of others in the shared desktop trash that cannot be read are not listed, so never emptied")
    func unreadableRecordsOfOthers() async throws {
        try await withScratch { s in
            try await s.provider.writeContents(path: "/mine.txt", data: Data("mine".utf8))
            _ = try await s.provider.removeItemUndoably(path: "/mine.txt", recursive: false)
            try Data("not a record".utf8).write(to: URL(fileURLWithPath: s.homeTrash + "/info/other.trashinfo"))
            try Data("other".utf8).write(to: URL(fileURLWithPath: s.homeTrash + "/files/other"))
            let trash = try #require(s.provider.trash)
            #expect(try await trash.empty() == 1)
            #expect(FileManager.default.fileExists(atPath: s.homeTrash + "/files/other"), "another application's item stays")
        }
    }

    @Test("trash-cli sees what the gateway trashed, and the gateway restores what trash-cli trashed")
    func interoperatesWithTrashCLI() async throws {
        try await withScratch { s in
            try await s.provider.writeContents(path: "/mine.txt", data: Data("mine".utf8))
            _ = try await s.provider.removeItemUndoably(path: "/mine.txt", recursive: false)
            let listed = try trashCLI("trash-list", [], dataHome: s.home.path)
            #expect(listed.contains(s.host("/mine.txt")), "\(listed)")

            try Data("theirs".utf8).write(to: URL(fileURLWithPath: s.host("/theirs.txt")))
            _ = try trashCLI("trash-put", [s.host("/theirs.txt")], dataHome: s.home.path)
            let trash = try #require(s.provider.trash)
            var items: [TrashedItem] = []
            for try await item in trash.items() { items.append(item) }
            let theirs = try #require(items.first { $0.originalPath == "/theirs.txt" }, "\(items)")
            #expect(theirs.size == 6 && theirs.deletionDate != nil)
            try await trash.restore(theirs)
            #expect(try await s.provider.contents(path: "/theirs.txt") == Data("theirs".utf8))

            // trash-cli restores what the gateway trashed (it asks which item: the first).
            let restore = try ChildProcess.run("/usr/bin/trash-restore", [s.host("/mine.txt")],
                                               environment: ProcessInfo.processInfo.environment.merging(["XDG_DATA_HOME": s.home.path]) { $1 },
                                               stdin: Data("0\n".utf8))
            #expect(restore.status == 0, "\(String(decoding: restore.stderr, as: UTF8.self))")
            #expect(try await s.provider.contents(path: "/mine.txt") == Data("mine".utf8))
        }
    }

    @Test("another file system (a tmpfs): .Trash-UID at its top, relative paths, one rename; copies skip it")
    func otherFileSystem() async throws {
        try await withScratch { s in
            let mount = s.host("/mnt")
            try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: false)
            let mounted = try ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", mount],
                                               environment: ProcessInfo.processInfo.environment)
            try #require(mounted.status == 0, "mounting a tmpfs needs root (CAP_SYS_ADMIN): the CI machine has it")
            defer { _ = try? ChildProcess.run("/bin/umount", ["-l", mount], environment: ProcessInfo.processInfo.environment) }
            try await s.provider.createFolder(path: "/mnt/d/e", withIntermediateDirectories: true)
            try await s.provider.writeContents(path: "/mnt/d/e/f.txt", data: Data("on tmpfs".utf8))
            let record = try await s.provider.removeItemUndoably(path: "/mnt/d", recursive: true)
            let trashFolder = mount + "/.Trash-\(getuid())"
            #expect(record.trashVolume == trashFolder)
            let info = try String(contentsOfFile: trashFolder + "/info/d.trashinfo", encoding: .utf8)
            #expect(info.contains("\nPath=d\n"), "relative to the top of the file system: \(info)")
            let listed = try trashCLI("trash-list", [], dataHome: s.home.path)
            #expect(listed.contains(mount + "/d"), "trash-cli finds it through the mount's .Trash-UID: \(listed)")

            // Copies from the root do not take the trash folder along.
            let copy = try TemporaryFolder.make(prefix: "gateway-trash-copy")
            defer { copy.remove() }
            let target = try LocalFileProvider(name: "copy", root: copy.path, homeTrash: s.homeTrash)
            let summary = try await CopyEngine().run(.copy, from: TransferEndpoint(provider: s.provider, path: "/"),
                                                     to: TransferEndpoint(provider: target, path: "/"))
            #expect(summary.failed == 0)
            #expect(!FileManager.default.fileExists(atPath: copy.path + "/mnt/.Trash-\(getuid())"))

            try await s.provider.undo(record)
            #expect(try await s.provider.contents(path: "/mnt/d/e/f.txt") == Data("on tmpfs".utf8))

            // An administrator's sticky .Trash wins: $topdir/.Trash/$uid.
            try FileManager.default.createDirectory(atPath: mount + "/.Trash", withIntermediateDirectories: false)
            chmod(mount + "/.Trash", 0o1777)
            let shared = try await s.provider.removeItemUndoably(path: "/mnt/d/e/f.txt", recursive: false)
            #expect(shared.trashVolume == mount + "/.Trash/\(getuid())")
            try await s.provider.undo(shared)
            #expect(try await s.provider.contents(path: "/mnt/d/e/f.txt") == Data("on tmpfs".utf8))

            // A trash folder others can write to (made by another user, or loosened) is not used.
            chmod(mount + "/.Trash/\(getuid())", 0o777)
            do {
                _ = try await s.provider.removeItemUndoably(path: "/mnt/d/e/f.txt", recursive: false)
                Issue.record("trashed into a folder others can write to")
            } catch {
                #expect(ErrorMessage.reason(for: error).contains("not a folder of this user's own"), "\(ErrorMessage.reason(for: error))")
            }
            #expect(try await s.provider.contents(path: "/mnt/d/e/f.txt") == Data("on tmpfs".utf8))
        }
    }
}

/// trash-cli's path encoding, written out independently of the library's.
enum TrashInfoEncoding {
    static func encode(_ path: String) -> String {
        path.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")) ?? path
    }
}
