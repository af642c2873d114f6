import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// The local provider must never reach outside its root.
@Suite("Local provider stays inside its root")
struct LocalConfinementTests {
    /// A root folder with a sibling "outside" folder holding a secret.
    struct Layout {
        let base: TemporaryFolder
        let root: String
        let outside: String
        let provider: LocalFileProvider

        init() throws {
            base = try TemporaryFolder.make(prefix: "gateway-confine")
            root = base.path + "/root"
            outside = base.path + "/outside"
            try FileManager.default.createDirectory(atPath: root + "/inside", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            try Data("secret".utf8).write(to: URL(fileURLWithPath: outside + "/secret.txt"))
            try Data("fine".utf8).write(to: URL(fileURLWithPath: root + "/inside/ok.txt"))
            provider = try LocalFileProvider(name: "jail", root: root)
        }
    }

    @Test("'..' above the root is refused for every operation")
    func dotDotRefused() async throws {
        let layout = try Layout()
        defer { layout.base.remove() }
        let p = layout.provider
        let escapes = ["..", "../outside/secret.txt", "/inside/../../outside/secret.txt", "inside/../../x"]
        for path in escapes {
            await expectFailure(.permissionDenied) { _ = try await p.attributesOfItem(path: path) }
            await expectFailure(.permissionDenied) { _ = try await p.contents(path: path) }
            await expectFailure(.permissionDenied) { try await p.writeContents(path: path, data: Data("x".utf8)) }
            await expectFailure(.permissionDenied) { try await p.removeItem(path: path, recursive: true) }
            await expectFailure(.permissionDenied) { _ = try await p.contentsOfDirectory(path: path).collectAll() }
            await expectFailure(.permissionDenied) { try await p.createFolder(path: path, withIntermediateDirectories: true) }
            await expectFailure(.permissionDenied) { try await p.moveItem(path: "/inside/ok.txt", to: path, overwrite: true) }
        }
        // A '..' that stays inside is fine.
        #expect(try await p.contents(path: "inside/../inside/ok.txt") == Data("fine".utf8))
        #expect(FileManager.default.fileExists(atPath: layout.outside + "/secret.txt"))
        #expect(!FileManager.default.fileExists(atPath: layout.base.path + "/x"))
    }

    @Test("absolute paths are inside the root, and URLs outside it are refused")
    func absolutePaths() async throws {
        let layout = try Layout()
        defer { layout.base.remove() }
        let p = layout.provider
        // "/outside/secret.txt" names root/outside/secret.txt, which does not exist: never the host file.
        await expectFailure(.notFound) { _ = try await p.contents(path: layout.outside + "/secret.txt") }
        await expectFailure(.notFound) { _ = try await p.contents(path: "/etc/hostname") }
        #expect(try p.relativePathOf(url: URL(fileURLWithPath: layout.root + "/inside/ok.txt")) == "/inside/ok.txt")
        #expect(throws: FileProviderError.self) { try p.relativePathOf(url: URL(fileURLWithPath: layout.outside + "/secret.txt")) }
        #expect(throws: FileProviderError.self) { try p.relativePathOf(url: URL(fileURLWithPath: layout.root + "/../outside")) }
        let realRoot = URL(fileURLWithPath: layout.root).resolvingSymlinksInPath().path
        #expect(p.rootPath == realRoot)
        #expect(try p.url(of: "/inside/ok.txt").path == realRoot + "/inside/ok.txt")
    }

    @Test("symbolic links resolving outside the root are refused; inside links work")
    func symlinks() async throws {
        let layout = try Layout()
        defer { layout.base.remove() }
        let p = layout.provider
        let fm = FileManager.default
        try fm.createSymbolicLink(atPath: layout.root + "/out-dir", withDestinationPath: layout.outside)
        try fm.createSymbolicLink(atPath: layout.root + "/out-file", withDestinationPath: layout.outside + "/secret.txt")
        try fm.createSymbolicLink(atPath: layout.root + "/dangling-out", withDestinationPath: layout.outside + "/new.txt")
        try fm.createSymbolicLink(atPath: layout.root + "/in-link", withDestinationPath: "inside/ok.txt")
        try fm.createSymbolicLink(atPath: layout.root + "/in-dir", withDestinationPath: "inside")

        await expectFailure(.permissionDenied) { _ = try await p.contents(path: "/out-file") }
        await expectFailure(.permissionDenied) { _ = try await p.contents(path: "/out-dir/secret.txt") }
        await expectFailure(.permissionDenied) { _ = try await p.contentsOfDirectory(path: "/out-dir").collectAll() }
        await expectFailure(.permissionDenied) { try await p.writeContents(path: "/out-dir/planted.txt", data: Data("x".utf8)) }
        await expectFailure(.permissionDenied) { try await p.writeContents(path: "/out-file", data: Data("x".utf8), atomically: false) }
        await expectFailure(.permissionDenied) { try await p.writeContents(path: "/dangling-out", data: Data("x".utf8), atomically: false) }
        await expectFailure(.permissionDenied) { try await p.createFolder(path: "/out-dir/newdir", withIntermediateDirectories: true) }
        await expectFailure(.permissionDenied) { try await p.setModificationDate(Date(), path: "/out-file") }
        #expect(try String(contentsOfFile: layout.outside + "/secret.txt", encoding: .utf8) == "secret")
        #expect(!fm.fileExists(atPath: layout.outside + "/new.txt"))
        #expect(!fm.fileExists(atPath: layout.outside + "/planted.txt"))

        // The links themselves are visible (as links) and removable without touching their targets.
        let listed = try await p.contentsOfDirectory(path: "/").collectAll()
        #expect(listed.first { $0.name == "out-file" }?.type == .symbolicLink)
        #expect(try await p.attributesOfItem(path: "/out-dir").type == .symbolicLink)
        try await p.removeItem(path: "/out-dir", recursive: true)
        #expect(fm.fileExists(atPath: layout.outside + "/secret.txt"))

        // Links that stay inside work normally.
        #expect(try await p.contents(path: "/in-link") == Data("fine".utf8))
        #expect(try await p.contents(path: "/in-dir/ok.txt") == Data("fine".utf8))
        #expect(try await p.contentsOfDirectory(path: "/in-dir").collectAll().map(\.name) == ["ok.txt"])
    }

    @Test("a root that does not exist is a clear error")
    func missingRoot() throws {
        #expect(throws: CocoaError.self) { try LocalFileProvider(name: "x", root: "/nonexistent/gateway/root") }
        do {
            _ = try LocalFileProvider(name: "x", root: "/nonexistent/gateway/root")
        } catch {
            #expect(ErrorMessage.reason(for: error).contains("does not exist"))
            #expect(error.failureKind == .notFound)
        }
    }

    @Test("errors carry the remote path and name, never the host root")
    func errorsNameRemotePath() async throws {
        let layout = try Layout()
        defer { layout.base.remove() }
        do {
            _ = try await layout.provider.attributesOfItem(path: "/inside/missing.txt")
            Issue.record("must fail")
        } catch let error as CocoaError {
            #expect(error.userInfo[NSFilePathErrorKey] as? String == "/inside/missing.txt")
            #expect(error.userInfo[GatewayRemoteNameErrorKey] as? String == "jail")
            #expect(!ErrorMessage.reason(for: error).contains(layout.root))
        }
    }
}
