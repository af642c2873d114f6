// libFuzzer harness for what an SFTP server sends: the input is a byte stream cut into packets by
// `SFTPFrameDecoder` (at most 64 KiB each here) and each packet read by `SFTPResponse(payload:)`.
// A `SFTPDecodingError` is an expected outcome; a trap, a crash or a huge allocation is not.
// Every reply read must be consistent: names and data within the packet's bytes.
import GatewaySFTPProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSFTPPacket(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    // Fed in two pieces, split where the first byte says: framing must not depend on the split.
    let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    var decoder = SFTPFrameDecoder(maximumPacketLength: 1 << 16)
    var packets = 0
    do {
        for piece in [bytes[0..<split], bytes[split...]] {
            decoder.append(piece)
            while let payload = try decoder.next() {
                packets += 1
                precondition(payload.count <= 1 << 16, "a packet longer than the bound")
                check(payload)
            }
        }
    } catch {
        _ = String(describing: error)
    }
    precondition(packets * 5 <= bytes.count, "more packets than the input can hold")
    // Each input is also read as one payload on its own.
    check(bytes)
    return 0
}

private func check(_ payload: [UInt8]) {
    guard let response = try? SFTPResponse(payload: payload) else { return }
    switch response {
    case .name(_, let entries):
        let bytes = entries.reduce(0) { $0 + $1.filename.count + $1.longName.count }
        precondition(bytes <= payload.count, "names longer than their packet")
        _ = entries.map(\.text)
    case .data(_, let data):
        precondition(data.count <= payload.count, "data longer than its packet")
    case .version(_, let extensions):
        precondition(extensions.count <= payload.count / 8 + 1, "more extensions than the packet holds")
    default:
        break
    }
    _ = String(describing: response)
}
