import Foundation
@testable import GatewayTestSupport
@testable import GatewayWebDAV
import StorageGateway
import Testing

/// A walk never trusts a `PROPFIND Depth: infinity` answer to be the whole tree: a server may
/// answer it with fewer levels and a 207 (issue 36). Against ``DepthDAVServer``, which answers
/// infinite depth fully, with a 403, or cut at one or two levels.
@Suite("WebDAV: walks that don't trust Depth: infinity")
struct InfiniteDepthTests {
    /// A three-level tree below `tree`, with an empty folder and a file at the deepest level.
    static let files = ["tree/top.txt": "top", "tree/a/one.txt": "one", "tree/a/b/two.txt": "two",
                        "tree/a/b/c/three.txt": "three", "tree/d/four.txt": "four"]
    static let expected: Set<String> = ["top.txt", "a", "a/one.txt", "a/b", "a/b/two.txt", "a/b/c", "a/b/c/three.txt",
                                        "d", "d/four.txt", "e"]
    /// The folders of the tree, `tree` included: a folder-by-folder walk sends one PROPFIND each.
    static let folderCount = 6

    static func provider(_ server: DepthDAVServer) -> WebDAVProvider {
        WebDAVProvider(configuration: HTTPClientConfiguration(baseURL: URL(string: server.url)!, remoteName: "dav"),
                       stateDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("depth-\(UUID().uuidString)"))
    }

    static func walk(_ provider: WebDAVProvider) async throws -> [String] {
        var paths: [String] = []
        for try await item in provider.walk(path: "/tree") { paths.append(try #require(RemotePath.relative(item.path, to: "/tree"))) }
        return paths
    }

    enum Answer: String, CaseIterable, CustomTestStringConvertible {
        case oneLevel, twoLevels, full, refused
        var testDescription: String { rawValue }
        var infiniteDepth: DepthDAVServer.InfiniteDepth {
            switch self {
            case .oneLevel: .levels(1)
            case .twoLevels: .levels(2)
            case .full: .full
            case .refused: .refused
            }
        }
        /// The PROPFINDs of the first walk: the infinite one, then one `Depth: 1` per folder it
        /// could not show to be complete (the deepest folders of the answer and their subfolders).
        var firstWalk: [String] {
            switch self {
            case .oneLevel: ["infinity"] + Array(repeating: "1", count: 5)   // a, a/b, a/b/c, d, e
            case .twoLevels: ["infinity", "1", "1"]                          // a/b, a/b/c
            case .full: ["infinity"]                                         // the deepest level holds no folder
            case .refused: ["infinity"] + Array(repeating: "1", count: InfiniteDepthTests.folderCount)
            }
        }
        /// The PROPFINDs of a second walk by the same provider: folder by folder once learned.
        var secondWalk: [String] {
            self == .full ? ["infinity"] : Array(repeating: "1", count: InfiniteDepthTests.folderCount)
        }
    }

    @Test("every item of a three-level tree, once each; one PROPFIND per folder the answer left unproven",
          arguments: Answer.allCases)
    func walkSeesEverything(_ answer: Answer) async throws {
        let server = try DepthDAVServer(answer.infiniteDepth, files: Self.files, folders: ["tree/e"])
        defer { server.stop() }
        let provider = Self.provider(server)
        let first = try await Self.walk(provider)
        #expect(Set(first) == Self.expected, "missing: \(Self.expected.subtracting(first).sorted())")
        #expect(first.count == Set(first).count, "reported twice: \(first)")
        #expect(server.propfindDepths == answer.firstWalk)
        // Parents come before their children.
        for (index, path) in first.enumerated() where path.contains("/") {
            let parent = String(path[..<path.lastIndex(of: "/")!])
            #expect(first.firstIndex(of: parent).map { $0 < index } == true, "\(path) before its folder: \(first)")
        }

        let before = server.propfindDepths.count
        let second = try await Self.walk(provider)
        #expect(Set(second) == Self.expected && second.count == Self.expected.count)
        #expect(Array(server.propfindDepths.dropFirst(before)) == answer.secondWalk, "learned once per remote")
    }

    @Test("a cut answer whose deepest folders are empty is complete: nothing learned, nothing twice")
    func emptyDeepestFolders() async throws {
        // One level, and every member folder empty: the answer was whole after all.
        let server = try DepthDAVServer(.levels(1), files: ["tree/top.txt": "top"], folders: ["tree/x", "tree/y"])
        defer { server.stop() }
        let provider = Self.provider(server)
        #expect(Set(try await Self.walk(provider)) == ["top.txt", "x", "y"])
        #expect(server.propfindDepths == ["infinity", "1", "1"])
        #expect(provider.infiniteDepthUsable, "no member was missing: infinite depth stays in use")
    }
}

/// The other answers whose completeness a walk or a monitor round relies on (issue 36): a
/// `sync-collection` report that the server cut short (RFC 6578 §3.6) is not a complete listing.
@Suite("WebDAV: a cut sync-collection answer is not a full listing")
struct TruncatedSyncCollectionTests {
    @Test("a first sync cut after one member reports no removals of the members it left out")
    func cutFirstSync() async throws {
        let files = ["flat/a.txt": "a", "flat/b.txt": "b", "flat/c.txt": "c"]
        let server = try DepthDAVServer(.full, files: files, syncCollectionLimit: 1)
        defer { server.stop() }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("cut-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let provider = WebDAVProvider(configuration: HTTPClientConfiguration(baseURL: URL(string: server.url)!, remoteName: "dav"),
                                      syncCollection: .always, stateDirectory: state)
        let anchor = try await provider.currentAnchor(at: "/flat", recursive: false)
        // Every round's token is "unknown" to the server: each round reads a first sync, cut.
        server.put("flat/a.txt", "a, changed")
        let caught = try await MonitorChecks.catchUp(provider, since: anchor, base: "/flat")
        #expect(caught.changes == [SeenChange(.modified, "a.txt")], "\(caught.changes)")
        let reports = server.requests.filter { $0.method == "REPORT" }
        #expect(reports.count >= 2, "the round asked with its token, then without: \(reports.count)")
        let again = try await MonitorChecks.catchUp(provider, since: caught.anchor, base: "/flat")
        #expect(again.changes.isEmpty, "\(again.changes)")
    }
}
