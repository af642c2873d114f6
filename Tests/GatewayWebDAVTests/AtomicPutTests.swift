import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// Small files go with one PUT where the server's PUT is itself atomic (Apache httpd 2.4 with
/// mod_dav_fs), and under a temporary name with a MOVE everywhere else.
@Suite("WebDAV atomic PUT")
struct AtomicPutTests {
    @Test("Apache: a small file (new or replacing) is one PUT to its name; a large one still goes through a temporary and MOVE")
    func apache() async throws {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let provider = WebDAVProvider(configuration: server.configuration(remoteName: "atomic"))
        let folder = "/atomic-\(UUID().uuidString.prefix(8))"
        try await provider.createFolder(path: folder, withIntermediateDirectories: false)
        defer { Task { try? await provider.removeItem(path: folder, recursive: true) } }
        try await provider.writeContents(path: folder + "/small.txt", data: Data("first".utf8))
        try await provider.writeContents(path: folder + "/small.txt", data: Data("second, longer".utf8))
        #expect(try await provider.contents(path: folder + "/small.txt") == Data("second, longer".utf8))
        let large = Bytes.pattern(3 << 20)
        try await provider.writeContents(path: folder + "/large.bin", data: large)
        #expect(try await provider.contents(path: folder + "/large.bin") == large)
        let puts = try await ApacheAccessLog.requests("PUT", containing: folder)
        let moves = try await ApacheAccessLog.requests("MOVE", containing: folder)
        #expect(puts.filter { $0.contains(folder + "/small.txt ") }.count == 2, "\(puts)")
        #expect(!moves.contains { $0.contains("small") }, "\(moves)")
        #expect(moves.count == 1 && puts.contains { $0.contains(".large.bin") }, "large: \(puts) \(moves)")
        // A source shorter than announced sends nothing, and the file stays as it was.
        let short = ByteStream(expectedLength: 100) { nil }
        await expectFailure(.connectionLost) {
            _ = try await provider.write(path: folder + "/small.txt", from: short, options: WriteOptions())
        }
        #expect(try await provider.contents(path: folder + "/small.txt") == Data("second, longer".utf8))
        #expect(try await ApacheAccessLog.requests("PUT", containing: folder).count == puts.count)
    }

    @Test("a server not known to PUT atomically gets a temporary name and a MOVE; atomic_put never and always are obeyed")
    func otherServers() async throws {
        for mode in [WebDAVProvider.AtomicPut.auto, .never, .always] {
            let server = try RecordingDAVServer()
            defer { server.stop() }
            let provider = WebDAVProvider(configuration: HTTPClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(server.port)/")!,
                                                                                 remoteName: "plain"), atomicPut: mode)
            var options = WriteOptions()
            options.returnsStoredAttributes = false
            _ = try await provider.write(path: "/f.txt", from: ByteStream(data: Data("x".utf8)), options: options)
            let lines = server.requests.map { $0.split(separator: "\r\n").first.map(String.init) ?? "" }
            let direct = lines.contains("PUT /f.txt HTTP/1.1")
            #expect(direct == (mode == .always), "\(mode): \(lines)")
            #expect(lines.contains { $0.hasPrefix("MOVE ") } == (mode != .always), "\(mode): \(lines)")
        }
    }
}
