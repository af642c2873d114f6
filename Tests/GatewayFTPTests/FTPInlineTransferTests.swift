import Foundation
@testable import GatewayTestSupport
import GatewayCore
@testable import GatewayTransport
import Logging
import Testing

/// FTP commands and small uploads from a caller on a ``BlockingIOExecutor`` thread (the copy
/// engine's transfers) run right there, on the real vsftpd: no hand-off, same replies.
@Suite("Inline FTP transfers", .timeLimit(.minutes(1)))
struct FTPInlineTransferTests {
    @Test("a small STOR with its post-quote rename, and MLST/DELE commands, run on the calling thread")
    func smallRequestsRunInline() async throws {
        let client = FTPClient(configuration: try FTPFailureTests.vsftpd(), logger: Logger(label: "test"))
        let root = try await client.root()
        let name = "inline-\(UUID().uuidString.prefix(8))"
        let folder = root == "/" ? "" : root
        let contents = Data("stored inline".utf8)
        let handedOff = client.threads.submittedCount
        let executor = BlockingIOExecutor()
        let (renamed, removed) = try await withTaskExecutorPreference(executor) {
            let renamed = try await client.storeRepeatable("\(folder)/\(name).tmp", path: "/\(name)", contents: contents,
                                                           then: ["RNFR \(folder)/\(name).tmp", "RNTO \(folder)/\(name)"])
            let removed = try await client.execute(["DELE \(folder)/\(name).tmp"].map { "*" + $0 }, directory: root, path: "/\(name)")
            return (renamed, removed)
        }
        #expect(renamed.map(\.code) == [350, 250], "\(renamed)")
        #expect(removed.last?.code == 550, "the temporary name is gone after the rename: \(removed)")
        #expect(client.threads.submittedCount == handedOff, "\(client.threads.submittedCount - handedOff) requests were handed to another thread")

        // Read back from the concurrency pool: a streamed download, on the client's own thread.
        let received = try await client.retrieve("\(folder)/\(name)", path: "/\(name)").collect()
        #expect(received == contents)
        #expect(client.threads.submittedCount == handedOff + 1)
        _ = try await client.execute(["DELE \(folder)/\(name)"], directory: root, path: "/\(name)")
    }
}
