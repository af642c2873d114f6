import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// A view of a Local remote that forwards only the basic and read/write capabilities: the base of
/// the test providers that change one behaviour (subclasses add protocols or override).
class LocalReadWriteView: FileProviderBasic, FileProviderReadWrite, @unchecked Sendable {
    class var type: String { "local-read-write-view" }
    let inner: LocalFileProvider
    init(_ inner: LocalFileProvider) { self.inner = inner }

    var name: String { inner.name }
    var baseURL: URL { inner.baseURL }
    var capabilities: ProviderCapabilities { inner.capabilities }
    func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing { inner.contentsOfDirectory(path: path, pageSize: pageSize) }
    func attributesOfItem(path: String) async throws -> FileObject { try await inner.attributesOfItem(path: path) }
    func storageProperties(path: String) async throws -> VolumeObject { try await inner.storageProperties(path: path) }
    func walk(path: String, pageSize: Int) -> PullSequence<FileObject> { TreeWalk.folderByFolder(self, path: path, pageSize: pageSize) }
    func searchFiles(path: String, recursive: Bool, matching: @escaping @Sendable (FileObject) throws -> Bool) -> PullSequence<FileObject> {
        inner.searchFiles(path: path, recursive: recursive, matching: matching)
    }
    func url(of path: String) throws -> URL { try inner.url(of: path) }
    func relativePathOf(url: URL) throws -> String { try inner.relativePathOf(url: url) }
    func readStream(path: String, options: ReadOptions) async throws -> ByteStream { try await inner.readStream(path: path, options: options) }
    func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        try await inner.write(path: path, from: stream, options: options)
    }
}

/// An app's own provider with only the basic and read/write capabilities (no folder operations).
final class ReadWriteOnlyProvider: LocalReadWriteView, @unchecked Sendable {
    override class var type: String { "read-write-only" }
    override var capabilities: ProviderCapabilities { ProviderCapabilities(features: []) }
}

@Suite("A provider with only read and write")
struct MinimalProviderTests {
    @Test("receives a flat copy into an existing folder; a tree's folders fail as not supported, the files beside them arrive")
    func flatCopy() async throws {
        let root = try TemporaryFolder.make()
        defer { root.remove() }
        let local = try LocalFileProvider(name: "src", root: root.path)
        try await local.createFolder(path: "/src/sub", withIntermediateDirectories: true)
        try await local.createFolder(path: "/dst", withIntermediateDirectories: true)
        try await local.writeContents(path: "/src/a.txt", data: Data("a".utf8))
        try await local.writeContents(path: "/src/b.txt", data: Data("b".utf8))
        let minimal = ReadWriteOnlyProvider(try LocalFileProvider(name: "dst", root: root.path + "/dst"))
        #expect((minimal as Any) as? any FileProviderOperations == nil)
        let flat = try await CopyEngine().run(.copy, from: TransferEndpoint(provider: local, path: "/src"),
                                             to: TransferEndpoint(provider: minimal, path: "/"))
        #expect(flat.copied == 2)
        #expect(flat.failed == 1, "the folder sub cannot be made")
        #expect(try await minimal.contents(path: "/b.txt") == Data("b".utf8))
        // A destination folder that does not exist cannot be made: a clear error before anything moves.
        do {
            _ = try await CopyEngine().run(.copy, from: TransferEndpoint(provider: local, path: "/src"),
                                           to: TransferEndpoint(provider: minimal, path: "/new"))
            Issue.record("a missing destination folder must fail")
        } catch {
            #expect(error.failureKind == .unsupported)
        }
    }
}
