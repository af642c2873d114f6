import Foundation
import GatewayCore
import Testing

@Suite("Error classification and messages")
struct ErrorTests {
    @Test("HTTP status codes map to kinds; transient ones say so", arguments: [
        (401, FailureKind.notAuthenticated, false), (403, .permissionDenied, false), (404, .notFound, false),
        (409, .conflict, false), (412, .versionMismatch, false), (423, .locked, true), (408, .timedOut, true),
        (429, .serverBusy, true), (500, .serverBusy, true), (503, .serverBusy, true), (504, .timedOut, true),
        (507, .noSpace, false), (400, .invalidInput, false),
    ])
    func httpKinds(status: Int, kind: FailureKind, transient: Bool) {
        let error = FileProviderHTTPError(statusCode: status, path: "/a", serverText: "  body text \n")
        #expect(error.failureKind == kind)
        #expect(error.isTransient == transient)
        #expect(error.serverText == "body text")
        #expect(ErrorMessage.reason(for: error).hasPrefix("HTTP \(status)"))
    }

    @Test("POSIX errors become CocoaErrors with path, remote and kind", arguments: [
        (ENOENT, FailureKind.notFound), (EEXIST, .alreadyExists), (EACCES, .permissionDenied), (ENOSPC, .noSpace),
        (ENOTEMPTY, .directoryNotEmpty), (EISDIR, .isADirectory), (ENOTDIR, .notADirectory), (EROFS, .permissionDenied),
    ])
    func posixKinds(code: Int32, kind: FailureKind) {
        let error = CocoaError.posix(code, path: "/x/y", remote: "docs", writing: true)
        #expect(error.failureKind == kind)
        #expect(!error.isTransient)
        #expect(error.userInfo[NSFilePathErrorKey] as? String == "/x/y")
        #expect(error.userInfo[GatewayRemoteNameErrorKey] as? String == "docs")
    }

    @Test("no space left is reported as such")
    func noSpaceMessage() {
        #expect(ErrorMessage.reason(for: CocoaError.posix(ENOSPC, path: "/f", writing: true)) == "no space left on device")
    }

    @Test("URL errors: connection problems are transient, TLS and auth are not")
    func urlKinds() {
        #expect(URLError(.timedOut).isTransient)
        #expect(URLError(.networkConnectionLost).isTransient)
        #expect(URLError(.cannotConnectToHost).isTransient)
        #expect(!URLError(.serverCertificateUntrusted).isTransient)
        #expect(URLError(.userAuthenticationRequired).failureKind == .notAuthenticated)
        #expect(ErrorMessage.reason(for: URLError(.cannotConnectToHost)).contains("cannot connect"))
    }

    @Test("cancellation is its own kind")
    func cancellation() {
        #expect(CancellationError().failureKind == .cancelled)
        #expect(!CancellationError().isTransient)
    }

    @Test("messages never contain credentials from URLs")
    func redaction() {
        let text = ErrorMessage.redactingCredentials(in: "failed https://alice:hunter2@dav.example/x and ftp://bob:pw@h:21/")
        #expect(!text.contains("hunter2"))
        #expect(!text.contains("bob:pw"))
        #expect(text.contains("https://***@dav.example/x"))
        #expect(ErrorMessage.redactingCredentials(in: "plain text") == "plain text")
    }

    @Test("gateway errors describe themselves and classify")
    func gatewayErrors() {
        #expect(FileProviderError.pathEscapesRoot(path: "../x").failureKind == .permissionDenied)
        #expect(FileProviderError.truncated(path: "/a", reason: "r").isTransient)
        #expect(FileProviderError.unsupported(operation: "quota", path: nil).failureKind == .unsupported)
        #expect(ErrorMessage.reason(for: FileProviderError.pathEscapesRoot(path: "../x")).contains("escapes the remote's root"))
    }
}

@Suite("Streams, listings and progress")
struct StreamTests {
    @Test("a verifying stream withholds the chunk that completes a file whose hash does not match")
    func verifyingStream() async throws {
        let data = Data(repeating: 7, count: 10_000)
        let good = ContentHasher.hash(data, .sha256)
        #expect(try await ByteStream(data: data, chunkSize: 3_000).verifying(.sha256, expected: good.uppercased(), path: "/f").collect() == data)
        for knownLength in [true, false] {
            // Known length: the 4th chunk completes the file and is never handed on; unknown: the end is refused.
            let chunks = ByteStream(data: data, chunkSize: 3_000)
            let source = knownLength ? chunks : ByteStream(chunks, expectedLength: nil)
            var delivered = 0
            do {
                for try await chunk in source.verifying(.md5, expected: good, path: "/f") { delivered += chunk.count }
                Issue.record("a mismatch must throw")
            } catch let error as FileProviderError {
                #expect(error.failureKind == .checksumMismatch)
                #expect(error.failureKind.isTransient)
                #expect(error.path == "/f")
            }
            let length: Int64? = knownLength ? 10_000 : nil
            #expect(delivered == (length == nil ? 10_000 : 9_000))
        }
    }

    @Test("a listing that stops before its last page is reported as truncated")
    func truncatedListing() async throws {
        let listing = DirectoryListing(path: "/d") {
            var calls = 0
            return {
                calls += 1
                return calls == 1 ? ListingPage(entries: [FileObject(path: "/d/a", type: .file)], isLast: false) : nil
            }
        }
        var received = 0
        do {
            for try await page in listing { received += page.entries.count }
            Issue.record("a truncated listing must throw")
        } catch let error as FileProviderError {
            #expect(error.failureKind == .connectionLost)
            #expect(received == 1)
        }
    }

    @Test("a complete listing ends after its last page")
    func completeListing() async throws {
        let listing = DirectoryListing(path: "/d") {
            var calls = 0
            return {
                calls += 1
                if calls > 2 { Issue.record("no page may be fetched after the last one") }
                return ListingPage(entries: [FileObject(path: "/d/\(calls)", type: .file)], isLast: calls == 2)
            }
        }
        #expect(try await listing.collectAll().map(\.name) == ["1", "2"])
        #expect(try await listing.entries.reduce(into: 0) { count, _ in count += 1 } == 2)
    }

    @Test("byte streams from memory deliver every byte in chunks")
    func memoryStream() async throws {
        let data = Data((0..<10_000).map { UInt8($0 % 251) })
        var chunks = 0
        var joined = Data()
        for try await chunk in ByteStream(data: data, chunkSize: 1000) {
            chunks += 1
            joined.append(chunk)
        }
        #expect(chunks == 10)
        #expect(joined == data)
        #expect(try await ByteStream(data: data).collect() == data)
        await #expect(throws: CocoaError.self) { _ = try await ByteStream(data: data).collect(limit: 100) }
    }

    @Test("progress counts bytes, computes fraction and ETA, and cancels")
    func progress() async throws {
        let progress = TransferProgress(totalBytes: 1000)
        progress.addBytes(250)
        try await Task.sleep(for: .milliseconds(250))
        progress.addBytes(250)
        let snapshot = progress.snapshot
        #expect(snapshot.completedBytes == 500)
        #expect(snapshot.fractionCompleted == 0.5)
        #expect(snapshot.bytesPerSecond > 0)
        #expect(snapshot.estimatedTimeRemaining != nil)
        #expect(throws: Never.self) { try progress.checkCancellation() }
        progress.cancel()
        #expect(throws: CancellationError.self) { try progress.checkCancellation() }
    }

    @Test("FileObject derives name and hidden flag from the path")
    func fileObject() {
        let item = FileObject(path: "/a/.secret", type: .file, size: 3)
        #expect(item.name == ".secret")
        #expect(item.isHidden)
        #expect(!FileObject(path: "/a/b", type: .directory).isHidden)
    }
}

@Suite("Progress of parts in flight")
struct ActiveProgressTests {
    @Test("named children are listed while they run; their bytes count towards the parent")
    func children() {
        let progress = TransferProgress(totalBytes: 300)
        let a = progress.makeChild(totalBytes: 100, name: "a")
        let b = progress.makeChild(totalBytes: 200, name: "b")
        let unnamed = progress.makeChild()
        a.addBytes(40)
        b.addBytes(10)
        unnamed.addBytes(5)
        var snapshot = progress.snapshot
        #expect(snapshot.completedBytes == 55)
        #expect(snapshot.active.map(\.name) == ["a", "b"])
        #expect(snapshot.active.map(\.completedBytes) == [40, 10])
        #expect(snapshot.active.map(\.totalBytes) == [100, 200])
        a.finish()
        snapshot = progress.snapshot
        #expect(snapshot.active.map(\.name) == ["b"])
        #expect(snapshot.completedBytes == 55)
        b.finish()
        unnamed.finish()
        #expect(progress.snapshot.active.isEmpty)
    }

    /// A backend of an app's own, with its own error type: the core reads it through
    /// ``DescribedFailure`` with no change.
    struct SFTPStatusError: DescribedFailure {
        var status: Int
        var path: String
        var failureKind: FailureKind { status == 2 ? .notFound : .serverBusy }
        var failurePath: String? { path }
        var serverText: String? { "No such file \u{1b}[31m" }
        var retryAfter: Duration? { .seconds(3) }
        var description: String { "SFTP status \(status): \(serverText ?? "")" }
    }

    @Test("an app's own error type gets messages, paths and classification through DescribedFailure")
    func describedFailure() {
        let error: any Error = SFTPStatusError(status: 2, path: "/a/b.txt")
        #expect(error.failureKind == .notFound)
        #expect(!error.isTransient)
        #expect(ErrorMessage.path(of: error) == "/a/b.txt")
        // Control characters from the server are escaped in the message.
        #expect(!ErrorMessage.reason(for: error).contains("\u{1b}"))
        #expect(ErrorMessage.reason(for: error).hasPrefix("SFTP status 2: No such file"))
        #expect((SFTPStatusError(status: 4, path: "/x") as any Error).isTransient)
        #expect((FileProviderHTTPError(statusCode: 503, path: "/p", retryAfter: .seconds(7)) as any DescribedFailure).retryAfter == .seconds(7))
    }
}
