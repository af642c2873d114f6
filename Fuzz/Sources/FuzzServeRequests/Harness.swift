// libFuzzer harness for what WebDAV clients send `gateway serve webdav` (GatewayServeRequests,
// `package` types, hence `@testable import`; scripts/fuzz.sh builds with -enable-testing):
// PROPFIND, PROPPATCH and LOCK bodies, and the If, Range and Timeout headers.
//
// The first byte picks the parser, the rest is its input. A malformed request is an expected
// outcome (a thrown error or `nil`); a crash, a trap or a hang is not. Beyond that:
// - a PROPPATCH value or a LOCK owner the server keeps is XML it writes back into responses, so it
//   must itself be well-formed (wrapped in one element, it parses);
// - an If header's submitted tokens are tokens its lists name;
// - a byte range lies inside the representation and is not empty;
// - a lock timeout is at least a second and never past the server's cap;
// - a public link's token (what `gateway serve links` reads from anyone) never verifies unless it
//   was signed with the secret, and any remote and path signed verifies back to the same;
// - a share page's query string (selector 0xF8 and above: sort, order, view, after/before cursors)
//   reads as at most 32 pairs, and what the page writes back for it reads back the same.
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import GatewayServeRequests
import GatewayCore
import GatewayState

private let linkSecret = Array("fuzz link secret 0123456789".utf8)

/// Whether `fragment` is well-formed XML content.
private func wellFormed(_ fragment: String) -> Bool {
    let parser = XMLParser(data: Data(("<w>" + fragment + "</w>").utf8))
    parser.shouldResolveExternalEntities = false
    parser.shouldProcessNamespaces = true
    return parser.parse()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServeRequests(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let selector = bytes[0]
    let data = Data(bytes.dropFirst())
    let text = String(decoding: data, as: UTF8.self)
    if selector >= 0xF8 {
        let parameters = FolderPageQuery.parameters(text)
        if parameters.count > 32 { fatalError("\(parameters.count) query pairs kept") }
        let query = FolderPageQuery(parameters)
        for slice in [query.slice, .first] {
            let written = query.string(slice: slice)
            var expected = query
            expected.slice = slice
            guard FolderPageQuery(FolderPageQuery.parameters(String(written.dropFirst()))) == expected else {
                fatalError("the query \(written.debugDescription) written for \(text.debugDescription) reads back differently")
            }
        }
        if let key = FolderSortKey(cursor: text), FolderSortKey(cursor: key.cursor) != key {
            fatalError("the cursor \(text.debugDescription) does not read back")
        }
        return 0
    }
    switch selector % 8 {
    case 0:
        _ = try? PropfindRequest.parse(data)
    case 1:
        if let update = try? PropertyUpdate.parse(data) {
            for case .set(let name, let value) in update.operations where !wellFormed(value) {
                fatalError("the value kept for \(name) is not well-formed XML: \(value.debugDescription)")
            }
        }
    case 2:
        if let lock = try? LockRequest.parse(data), !wellFormed(lock.owner) {
            fatalError("the lock owner kept is not well-formed XML: \(lock.owner.debugDescription)")
        }
    case 3:
        if let header = IfHeader.parse(text) {
            var named = Set<String>()
            for list in header.lists {
                if list.conditions.isEmpty { fatalError("an empty list parsed") }
                for case .token(let token) in list.conditions.map(\.subject) { named.insert(token) }
            }
            if !header.submittedTokens.isSubset(of: named) { fatalError("a submitted token the header does not name") }
        }
    case 4:
        // The size from the selector's neighbourhood: small sizes, zero, and the largest.
        let sizes: [Int64] = [0, 1, 7, 1000, Int64.max]
        let size = sizes[Int(selector / 6) % sizes.count]
        if case .range(let first, let length) = ByteRange.parse(text, size: size) {
            if first < 0 || length <= 0 || first >= size || length > size - first {
                fatalError("range \(first)+\(length) outside a \(size)-byte file for \(text.debugDescription)")
            }
        }
    case 6:
        if case .success(let token) = LinkToken.verify(text, secret: linkSecret) {
            fatalError("an unsigned token verified: \(token)")
        }
    case 7:
        // The input as a remote name and a path, split at the first NUL.
        let parts = text.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false)
        let token = LinkToken(remote: String(parts[0].prefix(255)), path: parts.count > 1 ? String(parts[1]) : "/",
                              issuedMilliseconds: UInt64(count), expiresMilliseconds: selector > 128 ? nil : UInt64.max)
        if let encoded = try? token.encoded(secret: linkSecret) {
            guard LinkToken.verify(encoded, secret: linkSecret) == .success(token) else { fatalError("a signed token did not verify back: \(token)") }
        }
    default:
        let longest = Duration.seconds(604_800)
        let timeout = TimeoutHeader.parse(text, longest: longest, fallback: .seconds(3600))
        if timeout < .seconds(1) || timeout > longest { fatalError("timeout \(timeout) for \(text.debugDescription)") }
    }
    return 0
}
