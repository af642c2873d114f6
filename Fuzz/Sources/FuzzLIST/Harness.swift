// libFuzzer harness for `LISTParser.parse(_:now:)`: the input is a LIST answer, split into lines at
// LF (a trailing CR is dropped, as the FTP provider does); every line goes through the parser with a
// fixed "now" (2026-11-24), so runs are reproducible. A parse error is an expected outcome; a crash,
// a trap or a hang is not. Parsed entries must have a non-empty name.
import Foundation
import GatewayFTP

private let now = Date(timeIntervalSince1970: 1_795_478_400)  // 2026-11-24T00:00:00Z

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLIST(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    for var line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.hasSuffix("\r") { line = line.dropLast() }
        do {
            if let entry = try LISTParser.parse(String(line), now: now) {
                precondition(!entry.name.isEmpty, "LISTParser returned an entry without a name for \(line.debugDescription)")
                _ = entry.hashValue
            }
        } catch {
            _ = error.description
        }
    }
    return 0
}
