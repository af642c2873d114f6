import Foundation
import GatewayCore
import Testing

/// The shared atomic write, driven through its four primitives by an in-memory backend: what a
/// new backend (SFTP next) gets by implementing `AtomicWriteBackend`.
@Suite("Atomic write (shared)")
struct AtomicWriteTests {
    /// Files in memory; every primitive call is logged, and one may be made to fail.
    final class MemoryBackend: AtomicWriteBackend, @unchecked Sendable {
        static let type = "memory"
        let name = "mem"
        var baseURL: URL { URL(string: "mem://")! }
        let capabilities = ProviderCapabilities(features: [])
        private let lock = NSLock()
        private var files: [String: Data] = ["/folder": Data()]
        private(set) var calls: [String] = []
        var failRename = false

        func file(_ path: String) -> Data? { lock.withLock { files[path] } }
        var paths: [String] { lock.withLock { files.keys.sorted() } }
        func log(_ call: String) { lock.withLock { calls.append(call) } }

        func atomicWriteLookUp(_ path: String) async throws -> FileObject? {
            lock.withLock {
                guard let data = files[path] else { return nil }
                return FileObject(path: path, type: path == "/folder" ? .directory : .file, size: Int64(data.count),
                                  versionTag: "v\(data.count)")
            }
        }

        func atomicWritePut(_ stream: ByteStream, to path: String, options: WriteOptions) async throws {
            log("put \(path)")
            var data = Data()
            do {
                for try await chunk in stream {
                    data.append(chunk)
                    lock.withLock { files[path] = data }   // a partial file, as a server would leave
                }
            }
        }

        func atomicWriteRename(_ from: String, to: String, replacing: Bool) async throws {
            log("rename \(from) \(to)")
            if failRename { throw CocoaError(.fileWriteNoPermission) }
            try lock.withLock {
                if !replacing, files[to] != nil { throw CocoaError(.fileWriteFileExists) }
                files[to] = files.removeValue(forKey: from)
            }
        }

        func atomicWriteDelete(_ path: String) async {
            log("delete \(path)")
            _ = lock.withLock { files.removeValue(forKey: path) }
        }

        func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing { DirectoryListing(path: path, failure: CancellationError()) }
        func attributesOfItem(path: String) async throws -> FileObject { try await atomicWriteLookUp(path) ?? FileObject(path: path, type: .file) }
        func storageProperties(path: String) async throws -> VolumeObject { throw FileProviderError.unsupported(operation: "quota", path: path) }
        func url(of path: String) throws -> URL { baseURL }
        func relativePathOf(url: URL) throws -> String { url.path }
    }

    func stream(_ parts: [String], expected: Int64? = nil) -> ByteStream {
        let data = parts.map { Data($0.utf8) }
        let index = Counter()
        return ByteStream(expectedLength: expected) { index.next(of: data) }
    }

    @Test("bytes go under a temporary name and appear under the final name only whole")
    func wholeOrNothing() async throws {
        let backend = MemoryBackend()
        let progress = TransferProgress()
        var options = WriteOptions(progress: progress)
        options.returnsStoredAttributes = false
        let written = try await backend.atomicWrite(path: "/a.txt", from: stream(["hel", "lo"], expected: 5), options: options)
        #expect(written.size == 5)
        #expect(backend.file("/a.txt") == Data("hello".utf8))
        #expect(backend.paths == ["/a.txt", "/folder"], "no temporary left")
        #expect(backend.calls.count == 2 && backend.calls[0].hasPrefix("put /.a.txt.gateway-") && backend.calls[1].hasPrefix("rename "))
        #expect(progress.snapshot.completedBytes == 5)
    }

    @Test("a short source leaves nothing: the temporary is deleted, the old file stays")
    func shortSource() async throws {
        let backend = MemoryBackend()
        _ = try await backend.atomicWrite(path: "/a.txt", from: stream(["old"]), options: WriteOptions())
        do {
            _ = try await backend.atomicWrite(path: "/a.txt", from: stream(["ne"], expected: 5), options: WriteOptions())
            Issue.record("a short source must fail")
        } catch FileProviderError.truncated(let path, let reason) {
            #expect(path == "/a.txt" && reason == "received 2 of 5 bytes; nothing was written")
        }
        #expect(backend.file("/a.txt") == Data("old".utf8))
        #expect(backend.paths == ["/a.txt", "/folder"])
    }

    @Test("beforeReplacing runs right before the rename; a failing rename keeps the target and removes the temporary")
    func beforeReplacing() async throws {
        let backend = MemoryBackend()
        _ = try await backend.atomicWrite(path: "/a.txt", from: stream(["old"]), options: WriteOptions())
        var options = WriteOptions(atomically: false)
        options.beforeReplacing = { path in backend.log("before \(path)") }
        _ = try await backend.atomicWrite(path: "/a.txt", from: stream(["new"]), options: options)
        let tail = backend.calls.suffix(3).map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(tail == ["put", "before", "rename"], "a write with the hook is atomic, and the hook comes between: \(backend.calls)")
        backend.failRename = true
        await #expect(throws: CocoaError.self) { _ = try await backend.atomicWrite(path: "/a.txt", from: stream(["newer"]), options: WriteOptions()) }
        #expect(backend.file("/a.txt") == Data("new".utf8))
        #expect(backend.paths == ["/a.txt", "/folder"])
    }

    @Test("the target is checked: the root, a folder, an existing file without overwrite, another version")
    func targetChecks() async throws {
        let backend = MemoryBackend()
        _ = try await backend.atomicWrite(path: "/a.txt", from: stream(["one"]), options: WriteOptions())
        await expectKind(.isADirectory) { _ = try await backend.atomicWrite(path: "/", from: self.stream([]), options: WriteOptions()) }
        await expectKind(.isADirectory) {
            _ = try await backend.atomicWrite(path: "/folder", from: self.stream([]), options: WriteOptions(overwrite: false))
        }
        await expectKind(.alreadyExists) {
            _ = try await backend.atomicWrite(path: "/a.txt", from: self.stream(["x"]), options: WriteOptions(overwrite: false))
        }
        await expectKind(.versionMismatch) {
            _ = try await backend.atomicWrite(path: "/a.txt", from: self.stream(["x"]), options: WriteOptions(ifVersion: "v9"))
        }
        _ = try await backend.atomicWrite(path: "/a.txt", from: stream(["four"]), options: WriteOptions(ifVersion: "v3"))
        #expect(backend.file("/a.txt") == Data("four".utf8))
        await #expect(throws: FileProviderError.self) { _ = try await backend.atomicWrite(path: "/../x", from: self.stream([]), options: WriteOptions()) }
    }

    @Test("an in-place write keeps what arrived unless the source was cut short")
    func inPlace() async throws {
        let backend = MemoryBackend()
        await #expect(throws: FileProviderError.self) {
            _ = try await backend.atomicWrite(path: "/p.txt", from: self.stream(["ab"], expected: 4), options: WriteOptions(atomically: false))
        }
        #expect(backend.file("/p.txt") == nil, "a partial in-place file is removed")
        #expect(AtomicWrite.discards(URLError(.networkConnectionLost), atomically: false) == false)
        #expect(AtomicWrite.discards(URLError(.networkConnectionLost), atomically: true))
    }

    @Test("discard repeats until the leftover is gone, and says when it could not")
    func discardRepeats() async {
        let attempts = Counter()
        let gone = await AtomicWrite.discard("/t", delete: { _ in _ = attempts.next(of: []) }, isGone: { _ in attempts.count >= 3 })
        #expect(gone && attempts.count == 3)
        let never = await AtomicWrite.discard("/t", delete: { _ in }, isGone: { _ in false })
        #expect(!never)
    }

    func expectKind(_ kind: FailureKind, _ body: @Sendable () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(kind)")
        } catch {
            #expect(error.failureKind == kind, "\(error)")
        }
    }
}

/// Hands out parts one by one, and counts calls.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var index = 0
    var count: Int { lock.withLock { index } }
    func next(of parts: [Data]) -> Data? {
        lock.withLock {
            defer { index += 1 }
            return index < parts.count ? parts[index] : nil
        }
    }
}
