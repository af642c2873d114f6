// libFuzzer harness for the HTTP response headers a server sends, as libcurl hands them over: the
// input is cut into lines after each LF (kept, as libcurl keeps CRLF), each line is taken apart by
// `CurlTransfer.headerLine(_:)` and added with `CurlTransfer.add(name:value:to:)`, the code every
// HTTP response goes through; a status line starts a new block. The headers must stay within their
// bound (names in lower case, values trimmed, at most 256 KiB of them; past it the transfer stops,
// as here), every line added must be kept whole, and the values read from them (`Content-Length`,
// `Retry-After`) must be what they claim.
@testable import GatewayTransport

/// What `headerLine(_:)` trims from either end of a value.
private let space: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPHeaders(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: count)
    var headers: [String: String] = [:]
    var bytes = 0
    var lineStart = 0
    lines: while lineStart < count {
        var lineEnd = lineStart
        while lineEnd < count, input[lineEnd] != 0x0A { lineEnd += 1 }
        if lineEnd < count { lineEnd += 1 }  // (the LF stays on the line)
        let line = UnsafeRawBufferPointer(rebasing: input[lineStart..<lineEnd])
        switch CurlTransfer.headerLine(line) {
        case .status:
            headers = [:]
            bytes = 0
        case .other:
            break
        case .field(let name, let value):
            precondition(!name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }), "an upper-case name: \(name)")
            precondition(!name.utf8.contains(0x3A), "a name holding its colon: \(name)")
            if let first = value.utf8.first, let last = value.utf8.last {
                precondition(!space.contains(first) && !space.contains(last), "an untrimmed value: \(value.debugDescription)")
            }
            let before = headers[name]
            guard CurlTransfer.add(name: name, value: value, to: &headers, bytes: &bytes) else {
                precondition(headers[name] == before, "a refused line changed \(name)")
                break lines  // (the transfer stops here)
            }
            precondition(headers[name] == (before.map { $0 + ", " + value } ?? value), "\(name) not kept whole")
        }
        lineStart = lineEnd
    }
    let kept = headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    precondition(kept == bytes && bytes <= CurlTransfer.maxHeaderBytes, "\(kept) bytes kept, \(bytes) counted")
    let head = HTTPResponseHead(status: 200, headers: headers)
    if let length = head.contentLength {
        precondition(length >= 0, "a negative Content-Length")
        precondition(headers["content-length"]?.contains(String(length)) == true, "Content-Length \(length) is not in its header")
    }
    if let wait = head.retryAfter { precondition(wait >= .zero, "a negative Retry-After") }
    return 0
}
