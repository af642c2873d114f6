import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// What a provider claims, it does: every capability protocol it conforms to and every feature
/// its ``ProviderCapabilities`` declares is exercised on every fixture, and what it does not
/// claim fails as unsupported. (The copy engine chooses its strategy from these claims.)
@Suite("Claimed capabilities work")
struct CapabilityBehaviourTests {
    static let data = Bytes.pattern(300_000, seed: 7)

    @Test("hashing: each declared algorithm gives the content's digest; no algorithm without FileProviderHashing", arguments: ProviderFixture.all)
    func hashing(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.writeContents(path: s.path("h.bin"), data: Self.data)
            _ = try await s.provider.attributesOfItem(path: s.path("h.bin")) // FTP learns its features on first use
            let algorithms = s.provider.capabilities.hashAlgorithms
            guard let hashing = s.provider as? any FileProviderHashing else {
                #expect(algorithms.isEmpty, "hash algorithms declared without FileProviderHashing")
                return
            }
            for algorithm in HashAlgorithm.allCases {
                if algorithms.contains(algorithm) {
                    let digest = try await hashing.hash(of: s.path("h.bin"), algorithm: algorithm)
                    #expect(digest == ContentHasher.hash(Self.data, algorithm), "\(algorithm)")
                } else {
                    await expectFailure(.unsupported) { _ = try await hashing.hash(of: s.path("h.bin"), algorithm: algorithm) }
                }
            }
        }
    }

    @Test("symbolic links: made and read as links (dangling too), listed as links, removed as links; never over an item", arguments: ProviderFixture.all)
    func symbolicLinks(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            guard let links = s.provider as? any FileProviderSymbolicLinks else { return }
            try await s.provider.writeContents(path: s.path("target.txt"), data: Data("target\n".utf8))
            let made = try await links.createSymbolicLink(at: s.path("link"), target: "target.txt")
            #expect(made.type == .symbolicLink && made.path == s.path("link"))
            #expect(try await links.destinationOfSymbolicLink(at: s.path("link")) == "target.txt")
            try await links.createSymbolicLink(at: s.path("dangling"), target: "../nowhere/missing")
            #expect(try await links.destinationOfSymbolicLink(at: s.path("dangling")) == "../nowhere/missing")
            let listed = try await s.provider.contentsOfDirectory(path: s.base).collectAll()
            let link = try #require(listed.first { $0.name == "link" })
            #expect(link.type == .symbolicLink && link.extraProperties["symlink_target"] == "target.txt")
            #expect(listed.first { $0.name == "dangling" }?.type == .symbolicLink)
            await expectFailure(.alreadyExists) { try await links.createSymbolicLink(at: s.path("target.txt"), target: "link") }
            await expectFailure(.alreadyExists) { try await links.createSymbolicLink(at: s.path("link"), target: "other") }
            await expectFailure(.notFound) { try await links.createSymbolicLink(at: s.path("no-folder/link"), target: "x") }
            await expectFailure(.invalidInput) { try await links.createSymbolicLink(at: s.path("empty"), target: "") }
            await expectFailure(.invalidInput) { _ = try await links.destinationOfSymbolicLink(at: s.path("target.txt")) }
            await expectFailure(.notFound) { _ = try await links.destinationOfSymbolicLink(at: s.path("missing")) }
            // Removing the link leaves what it points to.
            try await s.provider.removeItem(path: s.path("link"), recursive: false)
            #expect(try await s.provider.itemIfPresent(path: s.path("link")) == nil)
            #expect(try await s.provider.contents(path: s.path("target.txt")) == Data("target\n".utf8))
        }
    }

    @Test("hard links: a second name for the file, kept when the first goes; never over an item; unsupported where not declared",
          arguments: ProviderFixture.all)
    func hardLinks(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            guard let links = s.provider as? any FileProviderHardLinks else {
                #expect(!s.provider.capabilities.supports(.hardLinks), "hard links declared without FileProviderHardLinks")
                return
            }
            try await s.provider.writeContents(path: s.path("a.bin"), data: Self.data)
            _ = try await s.provider.attributesOfItem(path: s.path("a.bin"))  // SFTP learns its extensions on first use
            guard s.provider.capabilities.supports(.hardLinks) else {
                await expectFailure(.unsupported) { try await links.createHardLink(at: s.path("b.bin"), to: s.path("a.bin")) }
                #expect(try await s.provider.itemIfPresent(path: s.path("b.bin")) == nil)
                return
            }
            let made = try await links.createHardLink(at: s.path("b.bin"), to: s.path("a.bin"))
            #expect(made.path == s.path("b.bin") && made.type == .file && made.size == Int64(Self.data.count))
            #expect(try await s.provider.contents(path: s.path("b.bin")) == Self.data)
            try await s.provider.createFolder(path: s.path("d"), withIntermediateDirectories: false)
            await expectFailure(.alreadyExists) { try await links.createHardLink(at: s.path("b.bin"), to: s.path("a.bin")) }
            await expectFailure(.alreadyExists) { try await links.createHardLink(at: s.path("d"), to: s.path("a.bin")) }
            await expectFailure(.notFound) { try await links.createHardLink(at: s.path("c.bin"), to: s.path("missing.bin")) }
            await expectFailure(.notFound) { try await links.createHardLink(at: s.path("no-folder/c.bin"), to: s.path("a.bin")) }
            await expectFailure(.invalidInput) { try await links.createHardLink(at: s.path("e"), to: s.path("d")) }
            // The second name keeps the file when the first is removed.
            try await s.provider.removeItem(path: s.path("a.bin"), recursive: false)
            #expect(try await s.provider.contents(path: s.path("b.bin")) == Self.data)
        }
    }

    /// Servers on which an interrupted resumable write starts over instead of continuing:
    /// `rclone serve sftp` at its defaults cannot write into an existing file at an offset ("Illegal
    /// seek"); the SFTP provider finds that out and reports nothing kept, so the next attempt
    /// rewrites the whole file rather than failing.
    static let startsOver: Set<String> = ["sftp-rclone"]

    @Test("resumable writes: an interrupted write continues from the bytes kept, and only the whole file appears", arguments: ProviderFixture.all)
    func resumableWrite(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            guard let resumable = s.provider as? any FileProviderResumableWrite else { return }
            // Larger than what FTP holds in memory to send again (1 MiB), so the bytes stream.
            let data = Bytes.pattern(3 << 20, seed: 9)
            let key = "resume-\(UUID().uuidString.prefix(6))"
            let half = Int64(data.count / 2)
            #expect(try await resumable.resumableWriteLength(path: s.path("r.bin"), key: key) == 0)
            // The first half arrives in pieces; once some of it is kept where the write goes (the
            // partial file seen from outside, not a pause), the stream breaks with a transient
            // error, as a source connection that drops.
            let sent = Locked(0)
            let path = s.path("r.bin")
            let broken = ByteStream(expectedLength: Int64(data.count)) {
                let position = sent.value
                if position >= Int(half) {
                    // (Where nothing is ever kept, there is nothing to wait for.)
                    let deadline = ContinuousClock.now + .seconds(Self.startsOver.contains(fixture.name) ? 0 : 30)
                    while (try? await resumable.resumableWriteLength(path: path, key: key)) ?? 0 == 0, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    throw URLError(.networkConnectionLost)
                }
                let end = min(position + 256 * 1024, Int(half))
                sent.mutate { $0 = end }
                return data.subdata(in: position..<end)
            }
            do {
                _ = try await resumable.resumableWrite(path: s.path("r.bin"), key: key, offset: 0, from: broken,
                                                      options: WriteOptions(expectedSize: Int64(data.count)))
                Issue.record("a broken stream must fail the write")
            } catch {
                #expect(error.failureKind.keepsInterruptedWrite, "\(error)")
            }
            #expect(try await s.provider.itemIfPresent(path: s.path("r.bin")) == nil, "nothing under the name before the whole file")
            let kept = try await resumable.resumableWriteLength(path: s.path("r.bin"), key: key)
            if Self.startsOver.contains(fixture.name) {
                #expect(kept == 0, "\(fixture.name) writes into files at offsets after all: kept \(kept)")
            } else {
                #expect(kept > 0 && kept <= half, "kept \(kept) of \(half) bytes")
            }
            let rest = ByteStream(data: data.suffix(from: Int(kept)))
            let written = try await resumable.resumableWrite(path: s.path("r.bin"), key: key, offset: kept, from: rest,
                                                             options: WriteOptions(expectedSize: Int64(data.count)))
            #expect(written.size == Int64(data.count))
            #expect(try await s.provider.contents(path: s.path("r.bin")) == data)
            #expect(try await resumable.resumableWriteLength(path: s.path("r.bin"), key: key) == 0, "the partial file is gone")
        }
    }

    @Test("positional writes: pieces at any offsets, out of order, make the whole file", arguments: ProviderFixture.all)
    func positionalWrite(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            guard let positional = s.provider as? any FileProviderPositionalWrite else { return }
            let writer = try await positional.openPositionalWrite(path: s.path("p.bin"), size: Int64(Self.data.count), options: WriteOptions())
            let pieces = stride(from: 0, to: Self.data.count, by: 70_000).map { $0 }
            for offset in pieces.reversed() {
                try writer.write(Self.data.subdata(in: offset..<min(offset + 70_000, Self.data.count)), at: Int64(offset))
            }
            #expect(try await s.provider.itemIfPresent(path: s.path("p.bin")) == nil, "nothing under the name before commit")
            _ = try await writer.commit()
            #expect(try await s.provider.contents(path: s.path("p.bin")) == Self.data)
            // An aborted one leaves nothing.
            let aborted = try await positional.openPositionalWrite(path: s.path("q.bin"), size: 10, options: WriteOptions())
            try aborted.write(Data(repeating: 1, count: 5), at: 0)
            aborted.abort()
            #expect(try await s.provider.itemIfPresent(path: s.path("q.bin")) == nil)
        }
    }

    /// Servers known to take byte ranges (Apache mod_dav; SFTP servers writing at offsets), and
    /// known not to (`rclone serve sftp` writes only in sequence): the probe must find that.
    static let takesRanges: Set<String> = ["webdav-apache", "sftp-openssh", "sftp-asyncssh"]
    static let refusesRanges: Set<String> = ["sftp-rclone"]

    @Test("segmented writes: byte ranges sent at once make the whole file, or the server is found not to take them", arguments: ProviderFixture.all)
    func segmentedWrite(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            guard let segmented = s.provider as? any FileProviderSegmentedWrite else {
                #expect(!Self.takesRanges.contains(fixture.name), "\(fixture.name) takes ranges but has no segmented writes")
                return
            }
            let opened = try await segmented.openSegmentedWrite(path: s.path("s.bin"), size: Int64(Self.data.count), options: WriteOptions())
            if Self.takesRanges.contains(fixture.name) { #expect(opened != nil, "\(fixture.name) takes ranges, but the probe said no") }
            if Self.refusesRanges.contains(fixture.name) { #expect(opened == nil, "\(fixture.name) cannot take ranges, but the probe said yes") }
            guard let writer = opened else {
                // The server can't take ranges: nothing may be left behind.
                let names = try await s.provider.contentsOfDirectory(path: s.base).collectAll().map(\.name)
                #expect(names.isEmpty, "\(names)")
                return
            }
            let size = Self.data.count
            try await withThrowingTaskGroup(of: Void.self) { group in
                for offset in stride(from: 0, to: size, by: 100_000) {
                    let length = min(100_000, size - offset)
                    group.addTask {
                        try await writer.write(offset: Int64(offset), length: Int64(length),
                                               from: ByteStream(data: Self.data.subdata(in: offset..<(offset + length))))
                    }
                }
                try await group.waitForAll()
            }
            _ = try await writer.commit()
            #expect(try await s.provider.contents(path: s.path("s.bin")) == Self.data)
        }
    }

    @Test("declared features work: ranged reads, setting times, server-side copy and move", arguments: ProviderFixture.all)
    func declaredFeatures(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.writeContents(path: s.path("f.bin"), data: Self.data)
            _ = try await s.provider.attributesOfItem(path: s.path("f.bin"))
            let capabilities = s.provider.capabilities
            if capabilities.supports(.rangedRead) {
                #expect(try await s.provider.contents(path: s.path("f.bin"), offset: 123_456, length: 1000) == Self.data.subdata(in: 123_456..<124_456))
            }
            let stamp = Date(timeIntervalSince1970: 1_600_000_000)
            if capabilities.supports(.setModificationDate) {
                try await s.provider.setModificationDate(stamp, path: s.path("f.bin"))
                let seen = try await s.provider.attributesOfItem(path: s.path("f.bin")).modificationDate
                let precision = Double(capabilities.modificationTimePrecision.components.seconds)
                #expect(abs((seen?.timeIntervalSince1970 ?? 0) - stamp.timeIntervalSince1970) <= max(precision, 1), "\(String(describing: seen))")
            } else {
                await expectFailure(.unsupported) { try await s.provider.setModificationDate(stamp, path: s.path("f.bin")) }
            }
            if capabilities.supports(.modificationTimes) {
                #expect(try await s.provider.contentsOfDirectory(path: s.base).collectAll().allSatisfy { $0.modificationDate != nil })
            }
            if capabilities.supports(.serverSideCopy) {
                try await s.provider.copyItem(path: s.path("f.bin"), to: s.path("g.bin"), overwrite: false, progress: nil)
                #expect(try await s.provider.contents(path: s.path("g.bin")) == Self.data)
            }
            if capabilities.supports(.serverSideMove) {
                try await s.provider.moveItem(path: s.path("f.bin"), to: s.path("m.bin"), overwrite: false)
                #expect(try await s.provider.itemIfPresent(path: s.path("f.bin")) == nil)
                #expect(try await s.provider.contents(path: s.path("m.bin")) == Self.data)
            }
        }
    }
}
