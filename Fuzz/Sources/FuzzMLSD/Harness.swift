// libFuzzer harness for `MLSDParser.parse(_:)`: the input is an MLSD answer, split into lines at LF
// (a trailing CR is dropped); every line goes through the parser. A parse error is an expected
// outcome; a crash, a trap or a hang is not. Parsed entries must have a non-empty name.
import GatewayFTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMLSD(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    for var line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.hasSuffix("\r") { line = line.dropLast() }
        do {
            if let entry = try MLSDParser.parse(String(line)) {
                precondition(!entry.name.isEmpty, "MLSDParser returned an entry without a name for \(line.debugDescription)")
                _ = entry.hashValue
            }
        } catch {
            _ = error.description
        }
    }
    return 0
}
