import Foundation
@testable import GatewayCore
@testable import GatewayTestSupport
import Testing

/// The names the gateway writes beside its targets, and when a leftover under one is abandoned
/// (issue 29 part 6).
@Suite("temporary names: owner, kind, abandoned")
struct TemporaryNameTests {
    @Test("a new temporary names this process on this machine; its parts read back")
    func roundTrip() throws {
        let name = RemotePath.temporaryName(for: "report 1.txt")
        #expect(name.hasPrefix(".report 1.txt.gateway-\(TemporaryName.hostID)-\(getpid())-") && name.hasSuffix(".partial"), "\(name)")
        let parsed = try #require(TemporaryName(name))
        #expect(parsed.kind == .write(host: TemporaryName.hostID, pid: getpid()))
        // This process is running: never abandoned, whatever the age.
        #expect(!parsed.isAbandoned(modified: Date(timeIntervalSince1970: 0), age: .seconds(1)))
        // A long name keeps only the suffix, still recognised.
        let long = RemotePath.temporaryName(for: String(repeating: "n", count: 250))
        #expect(TemporaryName(long)?.kind == .write(host: TemporaryName.hostID, pid: getpid()), "\(long)")
    }

    @Test("a temporary of a process that is gone here is abandoned at once; others only by age")
    func abandoned() throws {
        let gone = try ChildProcess.spawn("/bin/true", [])
        gone.waitUntilExit()
        let now = Date()
        let dead = try #require(TemporaryName(".a.gateway-\(TemporaryName.hostID)-\(gone.processIdentifier)-1k2j3.partial"))
        #expect(dead.isAbandoned(modified: now, now: now))
        let elsewhere = try #require(TemporaryName(".a.gateway-0badc0de-\(gone.processIdentifier)-1k2j3.partial"))
        #expect(!elsewhere.isAbandoned(modified: now, now: now))
        #expect(elsewhere.isAbandoned(modified: now.addingTimeInterval(-86_401), now: now))
        #expect(!elsewhere.isAbandoned(modified: nil, now: now), "no date: never by age")
        for old in [".a.b.gateway-zk3j1.partial", ".a.gateway-resume-3f2a.partial", ".gateway-probe-1a2b3c4d x;y"] {
            let parsed = try #require(TemporaryName(old), "\(old)")
            #expect(!parsed.isAbandoned(modified: now.addingTimeInterval(-60), now: now), "\(old)")
            #expect(parsed.isAbandoned(modified: now.addingTimeInterval(-120), age: .seconds(60), now: now), "\(old)")
        }
        #expect(TemporaryName(".a.gateway-resume-3f2a.partial")?.kind == .resumable)
        #expect(TemporaryName(".a.b.gateway-zk3j1.partial")?.kind == .unownedWrite)
    }

    @Test("names that are not the gateway's are not taken for temporaries")
    func notOurs() {
        for name in ["a.partial", ".a.partial", "a.gateway-x.partial", ".a.gateway-.partial", ".a.gateway-x-y.partial", ".gateway-trash",
                     ".a.gateway-0badc0de-0-x.partial", ".a.gateway-0badc0de--5-x.partial", "report.txt"] {
            #expect(TemporaryName(name) == nil, "\(name)")
        }
    }
}
