import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// Copies to plain WebDAV compare against the source time recorded in each file's source stamp
/// (`dead_properties`), as against a destination that keeps modification times: a same-size
/// change is found even when the new source is older than the copy (a file restored from a
/// backup), which the "modified since written" rule alone cannot see.
@Suite("Copies compare with source stamps")
struct SourceStampCopyTests {
    @Test("Local to Apache: unchanged is skipped by the stamped time; a same-size, older replacement is copied; check agrees")
    func sameSizeOlderReplacement() async throws {
        try await ProviderFixture.local.run { from in
            try await ProviderFixture.webdavApache.run { to in
                let local = try #require(from.provider as? LocalFileProvider)
                try await local.createFolder(path: from.path("src"), withIntermediateDirectories: false)
                try await local.writeContents(path: from.path("src/a.txt"), data: Data("version one".utf8))
                try await local.setModificationDate(Date(timeIntervalSince1970: 1_700_000_000), path: from.path("src/a.txt"))
                let source = TransferEndpoint(provider: from.provider, path: from.path("src"))
                let destination = TransferEndpoint(provider: to.provider, path: to.path("dst"))
                let engine = CopyEngine(options: CopyOptions(retries: 1))

                #expect(try await engine.run(.copy, from: source, to: destination).copied == 1)
                let events = EventLog()
                let again = try await engine.run(.copy, from: source, to: destination, onEvent: events.record)
                #expect(again.copied == 0 && again.skipped == 1)
                #expect(events.skips.map(\.reason) == [.unchanged(.sizeAndTime)])
                #expect(try await engine.check(source: source, destination: destination).isIdentical)

                // Restored from a backup: the same size, other bytes, an older time than the copy.
                try await local.writeContents(path: from.path("src/a.txt"), data: Data("version two".utf8))
                try await local.setModificationDate(Date(timeIntervalSince1970: 1_600_000_000), path: from.path("src/a.txt"))
                let report = try await engine.check(source: source, destination: destination)
                #expect(report.different == ["a.txt"])
                let third = EventLog()
                let summary = try await engine.run(.copy, from: source, to: destination, onEvent: third.record)
                #expect(summary.copied == 1, "\(third.all)")
                #expect(try await to.provider.contents(path: to.path("dst/a.txt")) == Data("version two".utf8))
                #expect(try await engine.check(source: source, destination: destination).isIdentical)
            }
        }
    }
}
