import Foundation
@testable import GatewayTestSupport
import GatewayTransport
import Logging
import StorageGateway
import Testing

/// Bad input against real servers: wrong password, nothing listening, a server that stalls.
@Suite("WebDAV failures")
struct WebDAVFailureTests {
    static func server() throws -> (url: URL, user: String, password: String) {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"], let url = URL(string: text) else {
            throw TestSetupError("GATEWAY_TEST_WEBDAV_APACHE_URL is not set: run ./scripts/test.sh (it starts the servers)")
        }
        return (url, environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway", environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test")
    }

    @Test("a wrong password is 'not authenticated', and the password appears nowhere")
    func wrongPassword() async throws {
        let server = try Self.server()
        let secret = "Wr0ng-Secret-\(UUID().uuidString.prefix(6))"
        let provider = WebDAVProvider(configuration: HTTPClientConfiguration(baseURL: server.url, remoteName: "dav", user: server.user, password: secret))
        do {
            _ = try await provider.contentsOfDirectory(path: "/").collectAll()
            Issue.record("listing with a wrong password must fail")
        } catch {
            #expect(error.failureKind == .notAuthenticated, "got \(error)")
            #expect(!error.isTransient)
            let text = ErrorMessage.reason(for: error) + String(describing: error)
            #expect(!text.contains(secret))
            #expect(text.contains("401"))
        }
        #expect(await provider.isReachable() == false)
        // checkReachability says why.
        await #expect(throws: FileProviderHTTPError.self) { try await provider.checkReachability() }
        do {
            try await provider.checkReachability()
        } catch {
            #expect(error.failureKind == .notAuthenticated)
        }
    }

    @Test("nothing listening: a prompt connection error")
    func unreachable() async throws {
        let port = try FreePort.make()
        let provider = WebDAVProvider(configuration: HTTPClientConfiguration(
            baseURL: URL(string: "http://127.0.0.1:\(port)/dav/")!, remoteName: "gone", user: "u", password: "p", connectTimeout: .seconds(3)))
        let clock = ContinuousClock()
        let start = clock.now
        do {
            _ = try await provider.attributesOfItem(path: "/x")
            Issue.record("must fail")
        } catch let error as URLError {
            #expect(error.code == .cannotConnectToHost)
            #expect(error.isTransient)
            #expect(ErrorMessage.reason(for: error).contains("cannot connect"))
        }
        // Prompt, not a hang (generous: the other suites share this machine's two cores).
        #expect(clock.now - start < .seconds(30))
    }

    /// A provider for a test server of the suite's own on 127.0.0.1, with `timeout` to connect and between bytes.
    static func loopbackProvider(port: Int, name: String, timeout: Duration) -> WebDAVProvider {
        WebDAVProvider(configuration: HTTPClientConfiguration(
            baseURL: URL(string: "http://127.0.0.1:\(port)/")!, remoteName: name, connectTimeout: timeout, idleTimeout: timeout))
    }

    @Test("a server that accepts and then says nothing times out instead of hanging")
    func stalledServer() async throws {
        let silent = try SilentServer()
        defer { silent.stop() }
        let provider = Self.loopbackProvider(port: silent.port, name: "stall", timeout: .seconds(2))
        let clock = ContinuousClock()
        let start = clock.now
        do {
            _ = try await provider.contents(path: "/file")
            Issue.record("must fail")
        } catch {
            #expect(error.failureKind == .timedOut, "got \(error)")
            #expect(error.isTransient)
        }
        // A hang would never end; the bound is generous because the other suites share the machine.
        #expect(clock.now - start < .seconds(30))
    }

    @Test("a small upload goes as one buffer: a plain PUT with its length and no Content-Type (not a form)")
    func smallUploadHead() async throws {
        let server = try RecordingDAVServer()
        defer { server.stop() }
        let provider = Self.loopbackProvider(port: server.port, name: "record", timeout: .seconds(10))
        var options = WriteOptions(overwrite: true, atomically: true)
        options.returnsStoredAttributes = false
        _ = try await provider.write(path: "/note.txt", from: ByteStream(data: Data("hello!".utf8)), options: options)
        let put = try #require(server.requests.first { $0.hasPrefix("PUT ") })
        let fields = put.lowercased().components(separatedBy: "\r\n")
        #expect(fields.contains("content-length: 6"), "\(put)")
        #expect(!fields.contains { $0.hasPrefix("content-type:") }, "\(put)")
        #expect(!fields.contains { $0.hasPrefix("transfer-encoding:") }, "\(put)")
        #expect(server.requests.contains { $0.hasPrefix("MOVE ") }, "renamed into place")
    }

    @Test("bytes from a server that goes quiet mid-body reach the reader before the rest arrives")
    func quietServerMidBody() async throws {
        // 200 KiB announced (not small, so the head comes first), 1,000 bytes sent, then 30 s of
        // silence: the first bytes must not wait for the rest (nor for 64 KiB to gather).
        let server = try TricklingServer(total: 200 << 10, first: 1000, pause: 30)
        defer { server.stop() }
        let client = HTTPClient(configuration: HTTPClientConfiguration(
            baseURL: URL(string: "http://127.0.0.1:\(server.port)/")!, remoteName: "quiet", connectTimeout: .seconds(5), idleTimeout: .seconds(20)),
            logger: Logger(label: "test"))
        let clock = ContinuousClock()
        let start = clock.now
        let (head, body) = try await client.stream(HTTPRequest(method: "GET", url: URL(string: "http://127.0.0.1:\(server.port)/f")!, path: "/f"))
        #expect(head.status == 200)
        var iterator = body.makeAsyncIterator()
        let first = try #require(try await iterator.next())
        // Its own chunk, and well before the rest is sent: libcurl's progress callback, which hands
        // the bytes over, runs at least once a second (the margin is for a machine busy with other
        // suites). The rest is not waited for (the body is dropped, which ends the transfer).
        #expect(first.count == 1000)
        #expect(clock.now - start < .seconds(15), "the first bytes waited for the rest")
    }

    @Test("TLS: an untrusted certificate is refused by default; ca_file or insecure_tls let it through")
    func tls() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment["GATEWAY_TEST_WEBDAV_TLS_URL"], let url = URL(string: text),
              let caFile = environment["GATEWAY_TEST_WEBDAV_TLS_CA"] else {
            throw TestSetupError("GATEWAY_TEST_WEBDAV_TLS_URL is not set: run ./scripts/test.sh (it starts the servers)")
        }
        let server = try Self.server()
        var configuration = HTTPClientConfiguration(baseURL: url, remoteName: "tls", user: server.user, password: server.password)
        do {
            _ = try await WebDAVProvider(configuration: configuration).attributesOfItem(path: "/")
            Issue.record("a self-signed certificate must not be trusted by default")
        } catch let error as URLError {
            #expect(error.code == .serverCertificateUntrusted || error.code == .secureConnectionFailed, "got \(error)")
            #expect(!error.isTransient)
            #expect(ErrorMessage.reason(for: error).contains("certificate") || ErrorMessage.reason(for: error).contains("TLS"))
        }
        configuration.caFile = caFile
        #expect(try await WebDAVProvider(configuration: configuration).attributesOfItem(path: "/").isDirectory)
        // The server offers HTTP/2 over TLS, and the client takes it.
        let client = HTTPClient(configuration: configuration, logger: Logger(label: "test"))
        let (head, _) = try await client.send(HTTPRequest(method: "PROPFIND", url: url, path: "/", headers: [(name: "Depth", value: "0")]))
        #expect(head.status == 207)
        #expect(head.httpVersion == "2")
        configuration.caFile = nil
        configuration.insecureTLS = true
        #expect(try await WebDAVProvider(configuration: configuration).attributesOfItem(path: "/").isDirectory)
    }

    @Test("a busy server (503 + Retry-After) is asked again, up to the request attempts, after the pause it names")
    func busyServer() async throws {
        let server = try Self.server()
        guard ProcessInfo.processInfo.environment["GATEWAY_TEST_APACHE_ACCESS_LOG"] != nil else {
            throw TestSetupError("GATEWAY_TEST_APACHE_ACCESS_LOG is not set: run ./scripts/test.sh (it starts the servers)")
        }
        var components = URLComponents(url: server.url, resolvingAgainstBaseURL: false)!
        components.path = "/busy/"
        let clock = ContinuousClock()
        for attempts in [1, 3] {
            let provider = WebDAVProvider(configuration: HTTPClientConfiguration(
                baseURL: components.url!, remoteName: "busy", user: server.user, password: server.password, requestAttempts: attempts))
            let name = "file-\(UUID().uuidString)"
            let start = clock.now
            do {
                _ = try await provider.contents(path: "/" + name)
                Issue.record("a busy server must fail in the end")
            } catch let error as FileProviderHTTPError {
                #expect(error.statusCode == 503)
                #expect(error.isTransient)
                #expect(error.retryAfter == .seconds(1))
            }
            // The server saw exactly `attempts` requests, and the client waited its Retry-After between them.
            // Once Apache logged them (it writes a line after answering; a marker request shows when).
            let requests = try await ApacheAccessLog.requests("GET", containing: name)
            #expect(requests.count == attempts)
            #expect(clock.now - start >= .seconds(attempts - 1))
        }
    }

    @Test("missing items are 404 with the remote path; the message names it")
    func missing() async throws {
        let server = try Self.server()
        let provider = WebDAVProvider(configuration: HTTPClientConfiguration(baseURL: server.url, remoteName: "dav", user: server.user, password: server.password))
        do {
            _ = try await provider.contents(path: "/no such/file.txt")
            Issue.record("must fail")
        } catch let error as FileProviderHTTPError {
            #expect(error.statusCode == 404)
            #expect(error.path == "/no such/file.txt")
            #expect(error.failureKind == .notFound)
        }
    }

    @Test("config validation: credentials in the URL, bad vendor, bad numbers, password without user")
    func configValidation() throws {
        let registry = Gateway.makeRegistry()
        func problems(_ remote: String) -> [String] {
            do {
                _ = try GatewayConfiguration.parse(data: Data(#"{"remotes": {"d": \#(remote)}}"#.utf8), source: "c.json", registry: registry)
                return []
            } catch let error as ConfigError {
                return error.problems.map(\.description)
            } catch {
                return ["\(error)"]
            }
        }
        #expect(problems(#"{"type": "webdav", "url": "https://u:secret@h/"}"#).first?.contains("must not contain credentials") == true)
        #expect(!problems(#"{"type": "webdav", "url": "https://u:secret@h/"}"#).joined().contains("secret"))
        #expect(problems(#"{"type": "webdav", "url": "ftp://h/"}"#).first?.contains("http:// or https://") == true)
        #expect(problems(#"{"type": "webdav", "url": "https://h/", "vendor": "nextclod"}"#).first?.contains(#"did you mean "nextcloud""#) == true)
        #expect(problems(#"{"type": "webdav", "url": "https://h/", "max_connections": 0}"#).first?.contains("between 1 and 64") == true)
        #expect(problems(#"{"type": "webdav", "url": "https://h/", "idle_timeout": -1}"#).first?.contains("above 0") == true)
        #expect(problems(#"{"type": "webdav", "url": "https://h/", "password": "p"}"#).first?.contains("needs a \"user\"") == true)
        #expect(problems(#"{"type": "webdav", "url": "https://h/", "user": "u", "password": "p", "bearer_token": "t"}"#).first?.contains("not both") == true)
        #expect(problems(#"{"type": "webdav", "url": "https://h/", "user": "u", "password_env": "X", "connect_timeout": 2.5}"#).isEmpty)
    }
}
