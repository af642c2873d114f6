import Foundation
@testable import GatewayTestSupport
import Testing

/// A real full disk: a 1 MiB tmpfs mounted for the test (the test runs as root, as CI does; if the
/// mount cannot be made the test fails, it is not skipped).
@Suite("Full disk", .serialized)
struct FullDiskTests {
    @Test("copying onto a full disk fails with 'no space left on device' and leaves no partial file")
    func fullDisk() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let mountPoint = s.path("small-disk")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try Self.shell(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        try #require(mounted == 0, "could not mount a tmpfs (this test needs root, as the test script and CI run)")
        defer { _ = try? Self.shell(["umount", mountPoint]) }

        try s.write("big.bin", Data(count: 3 * 1024 * 1024))
        try FileManager.default.createDirectory(atPath: mountPoint + "/keep", withIntermediateDirectories: true)
        try Data("previous".utf8).write(to: URL(fileURLWithPath: mountPoint + "/keep/big.bin"))

        let fresh = try await s.runner.run(["copy", "big.bin", mountPoint + "/big.bin"])
        #expect(fresh.status == 1)
        let lines = fresh.stderr.split(separator: "\n")
        #expect(lines.first == "gateway: copy \(mountPoint)/big.bin: no space left on device")
        #expect(lines.last?.hasPrefix("gateway: copied 0 files (0 B), skipped 0, failed 1") == true)
        let over = try await s.runner.run(["copy", "big.bin", mountPoint + "/keep/"])
        #expect(over.status == 1)
        #expect(try String(contentsOfFile: mountPoint + "/keep/big.bin", encoding: .utf8) == "previous")
        let root = try FileManager.default.contentsOfDirectory(atPath: mountPoint)
        let keep = try FileManager.default.contentsOfDirectory(atPath: mountPoint + "/keep")
        #expect(root == ["keep"], "left behind: \(root)")
        #expect(keep == ["big.bin"], "left behind: \(keep)")

        // `about` reports the volume holding the path it is given.
        let about = try await s.runner.run(["about", "--json", mountPoint])
        let figures = try #require(try JSONSerialization.jsonObject(with: about.stdout) as? [String: Any])
        #expect(figures["total"] as? Int == 1024 * 1024)
    }

    static func shell(_ arguments: [String]) throws -> Int32 {
        try ChildProcess.run("/usr/bin/env", arguments, environment: ProcessInfo.processInfo.environment).status
    }
}
