import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing
@testable import gateway

/// The live progress block's text (drawn on a terminal by `copy`, `move` and `sync`).
@Suite("Progress display")
struct ProgressRendererTests {
    @Test("totals line, then one line per transfer in flight, cut to the terminal width")
    func block() async throws {
        let progress = TransferProgress()
        progress.addToTotals(bytes: 4 << 20, files: 3)
        let first = progress.makeChild(totalBytes: 2 << 20, name: "photos/2026/a very long folder name/IMG_0001.jpg")
        let second = progress.makeChild(totalBytes: 2 << 20, name: "b.bin")
        first.addBytes(1 << 20)
        second.addBytes(512 << 10)
        let lines = ProgressRenderer.block(progress.snapshot, width: 60)
        #expect(lines.count == 4, "\(lines)")
        #expect(lines[0].hasPrefix("Transferred: 1.5 MiB / 4.0 MiB, 37%"), "\(lines[0])")
        #expect(ProgressRenderer.totals(progress.snapshot).hasSuffix("files 0/3"))
        #expect(lines[1] == "Transferring:")
        #expect(lines[2].hasPrefix(" * photos/2026/"), "\(lines[2])")
        #expect(lines[2].contains("…"))
        #expect(lines[2].contains(": 50% /2.0 MiB, "), "\(lines[2])")
        #expect(lines[3].hasPrefix(" * b.bin: 25% /2.0 MiB, "), "\(lines[3])")
        #expect(lines.allSatisfy { $0.count <= 60 })

        first.finish()
        progress.addFile()
        let after = ProgressRenderer.block(progress.snapshot, width: 60)
        #expect(after.count == 3)
        #expect(after[2].hasPrefix(" * b.bin: "))
        second.finish()
        #expect(ProgressRenderer.block(progress.snapshot, width: 60).count == 1, "no transfer in flight: totals only")
    }

    @Test("rates and totals from hostile sizes never trap: infinite, huge or not a number")
    func hostileRates() {
        let progress = TransferProgress()
        progress.addToTotals(bytes: .max, files: 1)
        let child = progress.makeChild(totalBytes: .max, name: "huge.bin")
        child.addBytes(.max)
        for rate in [Double.infinity, -.infinity, .nan, 1e300] {
            var snapshot = progress.snapshot
            snapshot.bytesPerSecond = rate
            for index in snapshot.active.indices { snapshot.active[index].bytesPerSecond = rate }
            let lines = ProgressRenderer.block(snapshot, width: 80)
            #expect(lines[0].hasPrefix("Transferred: "), "\(rate): \(lines)")
            #expect(lines.count == 3 && lines[2].hasPrefix(" * huge.bin: "), "\(rate): \(lines)")
        }
    }

    @Test("redrawing in place: the cursor goes back over the block's lines")
    func erase() {
        #expect(ProgressRenderer.erase(0) == "")
        #expect(ProgressRenderer.erase(1) == "\r\u{1B}[J")
        #expect(ProgressRenderer.erase(4) == "\r\u{1B}[3A\u{1B}[J")
        #expect(ProgressRenderer.middleTruncated("abcdefghijklmnopqrstuvwxyz", to: 11) == "abcde…vwxyz")
    }
}
