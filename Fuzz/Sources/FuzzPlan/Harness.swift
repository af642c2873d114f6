// libFuzzer harness for plans (`gateway plan`): chunk files read line by line (`PlanEntry.parse`),
// manifests (`TransferPlan.decode`) and workers' markers (`ChunkMarker.decode`). A plan lives in a
// shared folder that other machines write, so all three are untrusted input. A refused line or
// manifest is an expected outcome (`PlanFormatError`); a crash, a trap or a hang is not. A line that
// parses must write back to a line that parses to the same entry, and never name a path outside
// the destination.
import Foundation
import GatewayTransfer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlan(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(UnsafeRawBufferPointer(start: start, count: count))
    let text = String(decoding: data, as: UTF8.self)
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        guard let entry = try? PlanEntry.parse(line) else { continue }
        if entry.path.hasPrefix("/") || entry.path.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0.isEmpty || $0 == ".." || $0 == "." }) {
            fatalError("an unsafe path was accepted: \(entry.path.debugDescription)")
        }
        guard let again = try? PlanEntry.parse(Substring(entry.line)), again == entry else {
            fatalError("entry did not survive a round trip: \(entry.line.debugDescription)")
        }
    }
    if let plan = try? TransferPlan.decode(data) {
        _ = plan.files + plan.folders
        _ = plan.bytes
        if plan.computeFingerprint() != plan.fingerprint { fatalError("a manifest with a wrong fingerprint was accepted") }
        for file in plan.splitFiles ?? [] {
            // Bounded by the chunks, and covering the file exactly.
            let ranges = file.byteRanges
            if ranges.count > plan.chunks.count || ranges.last.map({ $0.offset + $0.length }) != file.size {
                fatalError("a split file whose ranges do not cover it, or outnumber the chunks, was accepted")
            }
        }
    }
    if let marker = ChunkMarker.decode(data) { _ = try? marker.encoded() }
    _ = ChunkMarker.parse(fileName: text)
    return 0
}
