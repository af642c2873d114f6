// libFuzzer harness for the WebDAV 207 Multi-Status parser (`MultistatusParser`, internal, hence
// `@testable import`; scripts/fuzz.sh builds with -enable-testing).
//
// Each input is fed to a fresh parser in 1–8 chunks whose split points are derived from the input
// itself (an FNV-1a hash seeding a small PRNG), draining the completed responses after every chunk
// as `WebDAVProvider` does, then `finish` and a last drain. Broken XML must throw, never crash.
// When both the chunked parse and a one-chunk parse of the same bytes succeed, they must yield the
// same responses: a streaming parser's result must not depend on where the network split the body.
// A source stamp (the gateway's dead property) that parses must encode to a text that parses back
// to the same stamp.
import Foundation
@testable import GatewayWebDAV

/// Parses `data` in the given chunks; the responses, or nil if the parser threw.
private func parse(_ data: Data, splits: [Int]) -> [DAVResource]? {
    let parser = MultistatusParser()
    var resources: [DAVResource] = []
    var start = data.startIndex
    do {
        for split in splits + [data.endIndex] where split >= start {
            try parser.feed(data[start..<split], path: "/fuzz/")
            resources += parser.drain()
            start = split
        }
        try parser.finish(path: "/fuzz/")
        resources += parser.drain()
        return resources
    } catch {
        _ = parser.drain()
        return nil
    }
}

/// Split points (sorted offsets into `data`), deterministic for a given input.
private func splitPoints(_ data: Data) -> [Int] {
    guard data.count > 1 else { return [] }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in data { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    var state = hash | 1
    func next() -> UInt64 {  // xorshift64
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    let count = Int(next() % 8)
    return (0..<count).map { _ in data.startIndex + Int(next() % UInt64(data.count)) }.sorted()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultistatus(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let chunked = parse(data, splits: splitPoints(data))
    let whole = parse(data, splits: [])
    for resource in whole ?? [] {
        guard let text = resource.sourceStamp, let stamp = WebDAVProvider.StoredStamp(parsing: text) else { continue }
        guard let again = WebDAVProvider.StoredStamp(parsing: stamp.encoded), again.encoded == stamp.encoded else {
            fatalError("a source stamp does not read back: \(text.debugDescription) -> \(stamp.encoded.debugDescription)")
        }
        _ = again.describes(size: resource.contentLength, lastModified: Date(timeIntervalSince1970: 1_764_000_000), etag: resource.etag)
    }
    if let chunked, let whole, chunked != whole {
        fatalError("chunked parse differs from one-chunk parse: \(chunked.count) vs \(whole.count) responses\n\(chunked)\n\(whole)")
    }
    return 0
}
