// The library as an app author meets it: this target imports `StorageGateway` and nothing else of
// the project (no `@testable`, no test-support module), so everything here goes through public API,
// as an app would. The registration snippet of docs/configuration.md is compiled here verbatim
// (RegistrationSnippet.swift, written by scripts/readme-snippet.sh), the README's own snippet as
// the `readme-snippet` executable. Each behaviour runs on Local and on the Apache WebDAV server
// that scripts/test-servers.sh starts; a missing server fails the test.
import Foundation
import Logging   // swift-log, which an app adds to its own dependencies to build or pass Loggers
import StorageGateway
import Testing

/// A provider an app author gets: a fresh, empty folder on each backend.
struct AppRemote: Sendable, CustomTestStringConvertible {
    let name: String
    let make: @Sendable () async throws -> (provider: any FileProviderBasic, folder: String)
    var testDescription: String { name }

    static let all = [local, webdav]

    static let local = AppRemote(name: "local") {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("app-author-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return (try LocalFileProvider(name: "app", root: root.path), "/")
    }

    static let webdav = AppRemote(name: "webdav-apache") {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"], let url = URL(string: text) else {
            throw MissingServer(variable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        }
        let provider = WebDAVProvider(configuration: HTTPClientConfiguration(
            baseURL: url, remoteName: "app", user: environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway",
            password: environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test"))
        let folder = "/app-\(UUID().uuidString.prefix(8))"
        try await provider.createFolder(path: folder, withIntermediateDirectories: false)
        return (provider, folder)
    }
}

/// A test server's variable is not set: run `scripts/test-servers.sh start` and source its env file.
struct MissingServer: Error, CustomStringConvertible {
    let variable: String
    var description: String { "\(variable) is not set: start the test servers (scripts/test-servers.sh start)" }
}

func join(_ folder: String, _ name: String) -> String { folder == "/" ? "/" + name : folder + "/" + name }

@Suite("The library as an app author meets it")
struct AppAuthorTests {
    @Test("1. pages hold at most pageSize entries, the last non-empty page is marked last", arguments: AppRemote.all)
    func pages(remote: AppRemote) async throws {
        let (provider, folder) = try await remote.make()
        let writer = try #require(provider as? any FileProviderReadWrite)
        for index in 0..<26 { _ = try await writer.writeContents(path: join(folder, "f\(index)"), data: Data("\(index)".utf8)) }
        var sizes: [Int] = []
        var lastFlags: [Bool] = []
        for try await page in provider.contentsOfDirectory(path: folder, pageSize: 10) {
            sizes.append(page.entries.count)
            lastFlags.append(page.isLast)
        }
        #expect(sizes == [10, 10, 6])
        #expect(lastFlags == [false, false, true])
    }

    @Test("2. the same mistake is the same kind of error, told in one short line", arguments: AppRemote.all)
    func errorsFitToShow(remote: AppRemote) async throws {
        let (provider, folder) = try await remote.make()
        let writer = try #require(provider as? any FileProviderReadWrite)
        do {
            _ = try await writer.writeContents(path: join(folder, "missing/f.txt"), data: Data("x".utf8))
            Issue.record("writing into a missing folder must fail")
        } catch {
            #expect(error.failureKind == .notFound)
            let reason = ErrorMessage.reason(for: error)
            let path = ErrorMessage.path(of: error) ?? ""
            #expect(path.hasSuffix("/missing") || path == "missing", "names the missing folder: \(path)")
            #expect(!reason.contains("<") && !reason.contains("\n") && reason.count < 200, "one short line: \(reason)")
            #expect(!error.localizedDescription.contains("error 1.)"), "\(error.localizedDescription)")
        }
        // Errors the library builds itself read well too.
        let unknown = Gateway.makeResolver(configuration: GatewayConfiguration(remotes: [:]), registry: Gateway.makeRegistry())
        do {
            _ = try await unknown.provider(named: "nowhere")
            Issue.record("an unknown remote must fail")
        } catch {
            #expect(error is ConfigError)
            #expect(error.localizedDescription.contains("unknown remote"), "\(error.localizedDescription)")
        }
    }

    @Test("3. what a provider claims works; what it doesn't claim fails as unsupported", arguments: AppRemote.all)
    func honestCapabilities(remote: AppRemote) async throws {
        let (provider, folder) = try await remote.make()
        let writer = try #require(provider as? any FileProviderReadWrite)
        let path = join(folder, "claims.txt")
        _ = try await writer.writeContents(path: path, data: Data("claims".utf8))
        if let hashing = provider as? any FileProviderHashing {
            for algorithm in HashAlgorithm.allCases {
                if provider.capabilities.hashAlgorithms.contains(algorithm) {
                    #expect(try await hashing.hash(of: path, algorithm: algorithm) != nil)
                } else {
                    await #expect(throws: (any Error).self) { _ = try await hashing.hash(of: path, algorithm: algorithm) }
                }
            }
        }
        let operations = try #require(provider as? any FileProviderOperations)
        let date = Date(timeIntervalSince1970: 1_600_000_000)
        if provider.capabilities.supports(.setModificationDate) {
            try await operations.setModificationDate(date, path: path)
            #expect(try await provider.attributesOfItem(path: path).modificationDate == date)
        } else {
            do {
                try await operations.setModificationDate(date, path: path)
                Issue.record("setModificationDate without the capability must fail")
            } catch {
                #expect(error.failureKind == .unsupported)
            }
        }
    }

    @Test("4. a same-size change is copied again, even to an older time", arguments: AppRemote.all)
    func sameSizeChanges(remote: AppRemote) async throws {
        let (destination, folder) = try await remote.make()
        let (source, sourceFolder) = try await AppRemote.local.make()
        let local = try #require(source as? LocalFileProvider)
        _ = try await local.writeContents(path: join(sourceFolder, "a.txt"), data: Data("version one".utf8))
        try await local.setModificationDate(Date(timeIntervalSince1970: 1_700_000_000), path: join(sourceFolder, "a.txt"))
        let engine = CopyEngine(options: CopyOptions(retries: 1))
        let from = TransferEndpoint(provider: source, path: sourceFolder)
        let to = TransferEndpoint(provider: destination, path: join(folder, "copy"))
        #expect(try await engine.run(.copy, from: from, to: to).copied == 1)
        #expect(try await engine.run(.copy, from: from, to: to).skipped == 1)
        _ = try await local.writeContents(path: join(sourceFolder, "a.txt"), data: Data("version two".utf8))
        try await local.setModificationDate(Date(timeIntervalSince1970: 1_600_000_000), path: join(sourceFolder, "a.txt"))
        #expect(try await engine.check(source: from, destination: to).different == ["a.txt"])
        #expect(try await engine.run(.copy, from: from, to: to).copied == 1)
        let reader = try #require(destination as? any FileProviderReadWrite)
        #expect(try await reader.contents(path: join(folder, "copy/a.txt")) == Data("version two".utf8))
    }

    @Test("5. a registered type: required secrets are non-optional, defaults apply, bad defaults are reported")
    func registration() async throws {
        let registry = try registrationSnippet()
        let configuration = try GatewayConfiguration.parse(data: Data("""
            {"remotes": {"v": {"type": "vault", "url": "mem://x", "password_env": "VAULT_PASSWORD"}}}
            """.utf8), source: "app.json", registry: registry)
        let resolver = Gateway.makeResolver(configuration: configuration, registry: registry,
                                            context: ProviderContext(environment: ["VAULT_PASSWORD": "s3cret"]))
        let vault = try await resolver.provider(named: "v", as: VaultProvider.self)
        #expect(vault.retries == 3 && vault.password == "s3cret")
        // A typed look-up names the capability a remote lacks.
        await #expect(throws: FileProviderError.self) { _ = try await resolver.provider(named: "v", as: (any FileProviderOperations).self) }

        let badDefault = ProviderRegistry()
        try badDefault.register(ProviderDescriptor(type: "odd", summary: "A type with a wrong default.",
                                                   keys: [ConfigKey("chunk", .integer, default: "large", summary: "chunk size")],
                                                   make: { remote, _ in try VaultProvider(name: remote.name, url: "", password: "", retries: 0) }))
        #expect(throws: ConfigError.self) {
            _ = try GatewayConfiguration.parse(data: Data(#"{"remotes": {"o": {"type": "odd"}}}"#.utf8), source: "odd.json", registry: badDefault)
        }
    }

    @Test("6. module-qualified names work")
    func moduleQualifiedNames() {
        let registry = StorageGateway.Gateway.makeRegistry()
        #expect(registry.descriptor(forType: "webdav") != nil)
        #expect(registry.descriptor(forType: "local") != nil)
        #expect(registry.descriptor(forType: "ftp") != nil)
    }

    @Test("7. a read/write-only provider receives a flat copy; progress is a sequence; cancellation is not a failure")
    func lessBoilerplate() async throws {
        let (source, folder) = try await AppRemote.webdav.make()
        let writer = try #require(source as? any FileProviderReadWrite)
        for index in 0..<3 { _ = try await writer.writeContents(path: join(folder, "f\(index)"), data: Data(repeating: 7, count: 1000)) }
        let vault = try VaultProvider(name: "vault", url: "mem://", password: "", retries: 1)
        let engine = CopyEngine(options: CopyOptions(retries: 1))
        let log = Events()
        let summary = try await engine.run(.copy, from: TransferEndpoint(provider: source, path: folder),
                                           to: TransferEndpoint(provider: vault, path: "/")) { log.add($0) }
        let events = log.all
        #expect(summary.copied == 3 && summary.failed == 0)
        #expect(vault.names == ["/f0", "/f1", "/f2"])
        #expect(!events.contains { if case .createdFolder(let path) = $0 { path.isEmpty } else { false } }, "no root folder event")

        // One file with progress: the total is known from the start, and snapshots arrive as a sequence.
        let progress = TransferProgress()
        let watcher = Task { () -> [TransferProgress.Snapshot] in
            var seen: [TransferProgress.Snapshot] = []
            for await snapshot in progress.snapshots(every: .milliseconds(5)) { seen.append(snapshot) }
            return seen
        }
        try await Transfer.copyFile(from: TransferEndpoint(provider: source, path: join(folder, "f0")),
                                    to: TransferEndpoint(provider: vault, path: "/single"), progress: progress)
        progress.finish()
        let seen = await watcher.value
        #expect(seen.last?.totalBytes == 1000 && seen.last?.completedBytes == 1000)

        // A cancelled run stops without reporting its files as failed.
        let slow = try VaultProvider(name: "slow", url: "mem://", password: "", retries: 1, delay: .milliseconds(300))
        let (stream, task) = engine.start(.copy, from: TransferEndpoint(provider: source, path: folder), to: TransferEndpoint(provider: slow, path: "/"))
        let collector = Task { var all: [CopyEvent] = []; for await event in stream { all.append(event) }; return all }
        // Cancelled once its first write began (each takes 300 ms): it stops before the end.
        while slow.writesBegun == 0 { try await Task.sleep(for: .milliseconds(1)) }
        task.cancel()
        _ = try? await task.value
        let cancelledEvents = await collector.value
        #expect(!cancelledEvents.contains { if case .failed = $0 { true } else { false } })
        #expect(slow.names.count < 3, "the run went on to the end: \(slow.names)")
    }

    @Test("8. reachability says why; Local lists in name order; volumes have names", arguments: AppRemote.all)
    func smallThings(remote: AppRemote) async throws {
        let (provider, folder) = try await remote.make()
        try await provider.checkReachability()
        #expect(await provider.isReachable())
        let writer = try #require(provider as? any FileProviderReadWrite)
        for name in ["b", "a", "c"] { _ = try await writer.writeContents(path: join(folder, name), data: Data()) }
        let first = try await provider.contentsOfDirectory(path: folder).collectAll().map(\.name)
        let second = try await provider.contentsOfDirectory(path: folder, pageSize: 1).collectAll().map(\.name)
        #expect(first == second, "an unchanged folder lists in the same order")
        if provider is LocalFileProvider { #expect(first == ["a", "b", "c"]) }
        if provider.capabilities.supports(.quota) {
            #expect(try await provider.storageProperties().name?.isEmpty == false)
        }

        let unreachable = WebDAVProvider(configuration: HTTPClientConfiguration(
            baseURL: URL(string: "http://127.0.0.1:1/dav/")!, remoteName: "down"))
        do {
            try await unreachable.checkReachability()
            Issue.record("a closed port must not be reachable")
        } catch {
            #expect([.connectionLost, .timedOut, .serverBusy].contains(error.failureKind), "\(error.failureKind)")
            #expect(!ErrorMessage.reason(for: error).isEmpty)
        }
    }
}

extension AppAuthorTests {
    @Test("9. an app keeps contents as the mount does, without FUSE: materialize, list what is materialized, pin, evict; pending changes are enumerated, and all of it is there again after a restart",
          arguments: AppRemote.all)
    func fileProviderCache(remote: AppRemote) async throws {
        let (provider, folder) = try await remote.make()
        let files = try #require(provider as? any FileProviderReadWrite)
        let photos = join(folder, "photos")
        try await #require(provider as? any FileProviderOperations).createFolder(path: photos, withIntermediateDirectories: false)
        for name in ["a.jpg", "b.jpg"] { _ = try await files.writeContents(path: join(photos, name), data: Data(repeating: 7, count: 300_000)) }
        _ = try await files.writeContents(path: join(folder, "big.bin"), data: Data(repeating: 1, count: 700_000))

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("app-cache-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cacheFolder = scratch.appendingPathComponent("cache").path
        func open() throws -> FileProviderCache {
            try FileProviderCache(folder: cacheFolder, limit: 1_000_000,
                                  pins: try PinList.open(directory: scratch, cacheFolder: cacheFolder),
                                  index: try CacheIndex.open(directory: scratch, cacheFolder: cacheFolder))
        }
        var cache = try open()
        let a = try await provider.attributesOfItem(path: join(photos, "a.jpg"))
        let key = try #require(FileProviderCache.Key(a), "a file the remote lists has a version tag and a size")
        #expect(cache.state(of: key) == .placeholder)
        try await cache.materialize(a, from: files)
        #expect(cache.state(of: key) == .materialized && cache.materialized() == [key])

        // Pinned: fetched by the app, never evicted; more pins than the limit are refused.
        try cache.pin(photos, needing: 600_000)
        #expect(cache.isPinned(join(photos, "b.jpg")))
        #expect(throws: FileProviderCache.CacheError.busy(path: photos)) { try cache.evict(photos) }
        #expect(throws: FileProviderCache.CacheError.self) { try cache.pin(join(folder, "big.bin"), needing: 700_000) }
        let b = try await provider.attributesOfItem(path: join(photos, "b.jpg"))
        try await cache.materialize(b, from: files)
        // Pinned bytes are what the files hold; the total is what the disk holds (whole blocks).
        #expect(cache.usage.pinned == 600_000 && cache.usage.total >= 600_000 && cache.usage.total <= cache.limit)

        // The changes an app owes its remote, enumerated in order.
        let journal = try ChangeJournal.open(directory: scratch, cacheFolder: cacheFolder)
        let queue = try UploadQueue.open(directory: scratch, cacheFolder: cacheFolder)
        try journal.append(ChangeJournal.Change(kind: .createFolder, path: join(folder, "new")))
        try journal.append(ChangeJournal.Change(kind: .remove, path: join(folder, "big.bin"), version: a.versionTag))
        try queue.record(UploadQueue.Entry(cacheFile: "w1", remote: "app", path: join(folder, "new/c.txt"), modificationDate: nil))
        try cache.persist()

        // Started again: the same materialized items, pins and pending changes.
        cache = try open()
        #expect(cache.materialized().map(\.path) == [join(photos, "a.jpg"), join(photos, "b.jpg")])
        #expect(cache.pins == [photos])
        #expect(try ChangeJournal.open(directory: scratch, cacheFolder: cacheFolder).changes().map(\.kind) == [.createFolder, .remove])
        #expect(try UploadQueue.open(directory: scratch, cacheFolder: cacheFolder).entries().map(\.path) == [join(folder, "new/c.txt")])

        // Unpinned and evicted: placeholders again; a version the remote no longer has is not kept.
        try cache.unpin(photos)
        let held = cache.usage.total
        #expect(try cache.evict(photos) == held && cache.usage.total == 0, "the disk space freed")
        #expect(cache.state(of: key) == .placeholder && cache.materialized().isEmpty)
        _ = try await files.writeContents(path: join(photos, "a.jpg"), data: Data(repeating: 8, count: 300_001))
        do {
            try await cache.materialize(a, from: files)
            Issue.record("materializing a version the remote replaced must fail")
        } catch {
            #expect(cache.state(of: key) != .materialized, "\(error)")
        }
    }
}

/// An app's own provider: files in memory, read and write only (no folders, no operations), as
/// the registration snippet names it.
final class VaultProvider: FileProviderBasic, FileProviderReadWrite, @unchecked Sendable {
    static let type = "vault"
    let name: String
    let password: String
    let retries: Int
    let delay: Duration
    var baseURL: URL { URL(string: "mem://vault/")! }
    let capabilities = ProviderCapabilities(features: [])
    private let lock = NSLock()
    private var files: [String: Data] = [:]

    init(name: String, url: String, password: String, retries: Int, logger: Logger? = nil, delay: Duration = .zero) throws {
        self.name = name
        self.password = password
        self.retries = retries
        self.delay = delay
    }

    var names: [String] { lock.withLock { files.keys.filter { $0 != "/single" }.sorted() } }
    private var begun = 0
    /// Writes that began (a test waits for the first before it cancels).
    var writesBegun: Int { lock.withLock { begun } }

    func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing {
        let items = lock.withLock { files.map { FileObject(path: $0.key, type: .file, size: Int64($0.value.count)) } }
        return DirectoryListing(path: path) {
            var sent = false
            return {
                defer { sent = true }
                return sent ? nil : ListingPage(entries: path == "/" ? items : [], isLast: true)
            }
        }
    }

    func attributesOfItem(path: String) async throws -> FileObject {
        if path == "/" { return FileObject(path: "/", type: .directory) }
        guard let data = lock.withLock({ files[path] }) else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
        return FileObject(path: path, type: .file, size: Int64(data.count))
    }

    func storageProperties(path: String) async throws -> VolumeObject {
        throw FileProviderError.unsupported(operation: "quota", path: path)
    }

    func url(of path: String) throws -> URL { baseURL.appendingPathComponent(path) }
    func relativePathOf(url: URL) throws -> String { url.path }

    func readStream(path: String, options: ReadOptions) async throws -> ByteStream {
        guard let data = lock.withLock({ files[path] }) else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
        return ByteStream(data: data)
    }

    func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        lock.withLock { begun += 1 }
        if delay > .zero { try await Task.sleep(for: delay) }
        var data = Data()
        for try await chunk in stream {
            try options.progress?.checkCancellation()
            data.append(chunk)
            options.progress?.addBytes(Int64(chunk.count))   // a provider counts what it writes
        }
        lock.withLock { files[path] = data }
        return FileObject(path: path, type: .file, size: Int64(data.count))
    }
}

/// Events collected from the engine's callback, which may run on any thread.
final class Events: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [CopyEvent] = []
    func add(_ event: CopyEvent) { lock.withLock { events.append(event) } }
    var all: [CopyEvent] { lock.withLock { events } }
}
