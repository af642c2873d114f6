// libFuzzer harness for `FTPReply.parse(_:)`: the input is what a server sent on the control
// connection, split into lines at CRLF or LF. Every reply's `text` and `innerLines` are read, and
// the replies must be consistent: a three-digit code (000–999), at least one line, the
// first line starting with the code, and no more lines in all than the input had.
import GatewayTransport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFTPReply(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
        String(line.hasSuffix("\r") ? line.dropLast() : line)
    }
    let replies = FTPReply.parse(lines)
    var total = 0
    for reply in replies {
        precondition((0...999).contains(reply.code), "reply code \(reply.code) out of range")
        precondition(!reply.lines.isEmpty, "reply \(reply.code) without lines")
        precondition(reply.lines[0].utf8.starts(with: String(format3(reply.code)).utf8), "first line does not start with \(reply.code)")
        _ = reply.text
        _ = reply.innerLines
        total += reply.lines.count
    }
    precondition(total <= lines.count, "replies hold \(total) lines, the input had \(lines.count)")
    return 0
}

/// `7` as `"007"`.
private func format3(_ code: Int) -> String {
    let digits = String(code)
    return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
}
