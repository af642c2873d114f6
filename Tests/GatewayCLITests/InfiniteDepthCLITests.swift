import Foundation
@testable import GatewayTestSupport
import Testing

/// Issue 36: a server that answers `PROPFIND Depth: infinity` with one level and a 207 must not
/// make `copy`, `sync`, `ls -R`, `check` or `watch -R` miss the levels below.
@Suite("gateway against a server that cuts Depth: infinity to one level")
struct InfiniteDepthCLITests {
    static let files = ["tree/top.txt": "top\n", "tree/a/one.txt": "one\n", "tree/a/b/two.txt": "two\n",
                        "tree/a/b/c/three.txt": "three\n", "tree/d/four.txt": "four\n"]
    /// `tree/` as `CLIScratch.tree` shows it.
    static let listing = ["a/", "a/b/", "a/b/c/", "a/b/c/three.txt", "a/b/two.txt", "a/one.txt", "d/", "d/four.txt", "e/", "top.txt"]

    func configure(_ s: CLIScratch, _ server: DepthDAVServer) throws -> [String: String] {
        try s.write("config.json", Data(#"{"remotes": {"dav": {"type": "webdav", "url": "\#(server.url)"}}}"#.utf8))
        return ["GATEWAY_CONFIG": s.path("config.json"), "GATEWAY_STATE_DIR": s.path("state")]
    }

    func expectComplete(_ s: CLIScratch, _ folder: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try s.tree(folder) == Self.listing, sourceLocation: sourceLocation)
        for (path, content) in Self.files {
            let local = folder + "/" + path.dropFirst("tree/".count)
            let data = s.exists(local) ? try s.read(local) : nil
            #expect(data == Data(content.utf8), "\(local) differs", sourceLocation: sourceLocation)
        }
    }

    @Test("copy, sync, ls -R and check see every level; -v says once that the walk goes folder by folder")
    func everyCommandSeesTheWholeTree() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let server = try DepthDAVServer(.levels(1), files: Self.files, folders: ["tree/e"])
        defer { server.stop() }
        let environment = try configure(s, server)

        let copied = try await s.runner.run(["copy", "-v", "dav:tree", "back"], extraEnvironment: environment)
        #expect(copied.status == 0, "\(copied.stderr)")
        try expectComplete(s, "back")
        let notices = copied.stderr.components(separatedBy: "walking folder by folder").count - 1
        #expect(notices == 1, "said once: \(copied.stderr)")

        let listed = try await s.runner.run(["ls", "-R", "dav:tree"], extraEnvironment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.text.split(separator: "\n").map(String.init).sorted() == Self.listing)

        let checked = try await s.runner.run(["check", "dav:tree", "back"], extraEnvironment: environment)
        #expect(checked.status == 0, "\(checked.text) \(checked.stderr)")

        // A sync deletes only what the source lacks: nothing the walk might have missed.
        try makeMirror(s, "mirror")
        try s.write("mirror/a/b/c/extra.txt", Data("extra\n".utf8))
        let synced = try await s.runner.run(["sync", "dav:tree", "mirror"], extraEnvironment: environment)
        #expect(synced.status == 0, "\(synced.stderr)")
        try expectComplete(s, "mirror")
        #expect(!s.exists("mirror/a/b/c/extra.txt"), "the one extra file is deleted")

        // A sync into a folder that is empty copies every level.
        let fresh = try await s.runner.run(["sync", "dav:tree", "fresh"], extraEnvironment: environment)
        #expect(fresh.status == 0, "\(fresh.stderr)")
        try expectComplete(s, "fresh")
    }

    /// A complete local copy of the tree.
    func makeMirror(_ s: CLIScratch, _ folder: String) throws {
        for (path, content) in Self.files { try s.write(folder + "/" + path.dropFirst("tree/".count), Data(content.utf8)) }
        try FileManager.default.createDirectory(atPath: s.path(folder + "/e"), withIntermediateDirectories: true)
    }

    @Test("watch -R reports a change three levels down")
    func watchSeesDeepChanges() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let server = try DepthDAVServer(.levels(1), files: Self.files, folders: ["tree/e"])
        defer { server.stop() }
        let environment = try configure(s, server)
        let anchor = s.path("tree.anchor")
        let first = try await s.runner.run(["watch", "-R", "--once", "--state", anchor, "dav:tree"], extraEnvironment: environment)
        #expect(first.status == 0 && first.text.isEmpty, "\(first.text) \(first.stderr)")
        server.put("tree/a/b/c/new.txt", "new\n")
        server.put("tree/a/b/c/three.txt", "three, changed\n")
        let second = try await s.runner.run(["watch", "-R", "--once", "--state", anchor, "dav:tree"], extraEnvironment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(Set(second.text.split(separator: "\n").map(String.init)) == ["created a/b/c/new.txt", "modified a/b/c/three.txt"],
                "\(second.text)")
    }
}
