import Foundation
@testable import GatewayState
@testable import GatewayTestSupport
import Testing

@Suite("Upload ledger")
struct UploadLedgerTests {
    func withLedger(_ body: (UploadLedger, URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-test-ledger-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(try UploadLedger.open(directory: folder), folder)
    }

    @Test("an upload is continued only with the same fingerprint, once its writer let it go, by one writer at a time")
    func claims() throws {
        try withLedger { ledger, _ in
            let remote = "http://127.0.0.1:9000/bucket-\(UUID().uuidString)"
            try ledger.record(remote: remote, path: "dir/big", uploadID: "u1", fingerprint: "f1")
            // Its writer (this process) still has it.
            #expect(try ledger.claim(remote: remote, path: "dir/big", fingerprint: "f1", candidates: ["u1"]) == nil)
            ledger.release(remote: remote, uploadID: "u1")
            // Another fingerprint (other metadata, another part size) never joins it.
            #expect(try ledger.claim(remote: remote, path: "dir/big", fingerprint: "f2", candidates: ["u1"]) == nil)
            // Another path or bucket neither.
            #expect(try ledger.claim(remote: remote, path: "dir/other", fingerprint: "f1", candidates: ["u1"]) == nil)
            #expect(try ledger.claim(remote: remote + "x", path: "dir/big", fingerprint: "f1", candidates: ["u1"]) == nil)
            // The same writes again: continued, and then in use.
            #expect(try ledger.claim(remote: remote, path: "dir/big", fingerprint: "f1", candidates: ["u1"]) == "u1")
            #expect(try ledger.claim(remote: remote, path: "dir/big", fingerprint: "f1", candidates: ["u1"]) == nil)
            try ledger.finish(remote: remote, uploadID: "u1")
            #expect(try ledger.claim(remote: remote, path: "dir/big", fingerprint: "f1", candidates: ["u1"]) == nil)
        }
    }

    @Test("an upload whose writer process still runs is not taken; one whose writer is gone is, the newest first")
    func otherProcesses() throws {
        try withLedger { ledger, _ in
            let remote = "http://127.0.0.1:9000/bucket-\(UUID().uuidString)"
            // pid 1 always runs; a child that exited is gone.
            try ledger.record(remote: remote, path: "k", uploadID: "live", fingerprint: "f", date: Date(), pid: 1)
            let child = try ChildProcess.spawn("/bin/true", [])
            child.waitUntilExit()
            let gone = child.processIdentifier
            try ledger.record(remote: remote, path: "k", uploadID: "old", fingerprint: "f", date: Date(timeIntervalSinceNow: -60), pid: gone)
            try ledger.record(remote: remote, path: "k", uploadID: "new", fingerprint: "f", date: Date(timeIntervalSinceNow: -10), pid: gone)
            #expect(try ledger.claim(remote: remote, path: "k", fingerprint: "f", candidates: ["live", "old", "new"]) == "new")
            #expect(try ledger.claim(remote: remote, path: "k", fingerprint: "f", candidates: ["live", "old", "new"]) == "old")
            #expect(try ledger.claim(remote: remote, path: "k", fingerprint: "f", candidates: ["live", "old", "new"]) == nil)
        }
    }

    @Test("records of uploads the server no longer has are dropped; the ledger survives reopening")
    func staleRecords() throws {
        try withLedger { ledger, folder in
            let remote = "http://127.0.0.1:9000/bucket-\(UUID().uuidString)"
            try ledger.record(remote: remote, path: "k", uploadID: "done-elsewhere", fingerprint: "f", date: Date(), pid: Int32.max - 1)
            try ledger.record(remote: remote, path: "k", uploadID: "open", fingerprint: "f", date: Date(), pid: Int32.max - 1)
            // The server lists only "open" now.
            #expect(try ledger.claim(remote: remote, path: "k", fingerprint: "x", candidates: ["open"]) == nil)
            let reopened = try UploadLedger.open(directory: folder)
            #expect(try reopened.claim(remote: remote, path: "k", fingerprint: "f", candidates: ["open", "done-elsewhere"]) == "open")
            #expect(try reopened.claim(remote: remote, path: "k", fingerprint: "f", candidates: ["open", "done-elsewhere"]) == nil)
        }
    }
}
