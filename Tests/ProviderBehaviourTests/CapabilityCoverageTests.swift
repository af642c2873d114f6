import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// The capability tests skip a provider without the capability (issue 37). So that a claim that
/// silently disappears everywhere cannot leave a capability untested, every capability and
/// feature those tests gate on must be claimed by at least one fixture of the suite.
@Suite("Every gated capability is exercised by some fixture")
struct CapabilityCoverageTests {
    @Test("resumable, positional and segmented writes, hashing, conditional writes, times, quota, server-side copy and move, links")
    func everyCapabilityHasAFixture() async throws {
        var claimed: [String: [String]] = [:]
        func note(_ capability: String, _ fixture: String, _ holds: Bool) { if holds { claimed[capability, default: []].append(fixture) } }
        for fixture in ProviderFixture.all {
            try await fixture.run { s in
                // FTP declares some features only once FEAT was read by a first operation.
                _ = try await s.provider.contentsOfDirectory(path: s.base).collectAll()
                let features = s.provider.capabilities
                note("resumable writes", fixture.name, s.provider is any FileProviderResumableWrite)
                note("positional writes", fixture.name, s.provider is any FileProviderPositionalWrite)
                note("segmented writes", fixture.name, s.provider is any FileProviderSegmentedWrite)
                note("hashing", fixture.name, !features.hashAlgorithms.isEmpty)
                note("conditional writes", fixture.name, features.supports(.conditionalWrite))
                note("setting modification times", fixture.name, features.supports(.setModificationDate))
                note("quota", fixture.name, features.supports(.quota))
                note("server-side copy", fixture.name, features.supports(.serverSideCopy))
                note("server-side move", fixture.name, features.supports(.serverSideMove))
                note("ranged reads", fixture.name, features.supports(.rangedRead))
                note("symbolic links", fixture.name, s.provider is any FileProviderSymbolicLinks)
                note("hard links", fixture.name, features.supports(.hardLinks))
            }
        }
        for capability in ["resumable writes", "positional writes", "segmented writes", "hashing", "conditional writes",
                           "setting modification times", "quota", "server-side copy", "server-side move", "ranged reads", "symbolic links", "hard links"] {
            #expect(!(claimed[capability] ?? []).isEmpty, "no fixture claims \(capability): its behaviour test checks nothing")
        }
    }
}
