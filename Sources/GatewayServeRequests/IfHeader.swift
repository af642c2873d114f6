/// The WebDAV `If` header (RFC 4918 section 10.4): lists of conditions on lock tokens and entity
/// tags, each list for the request's resource or for the resource its tag names.
///
/// ```
/// If: <http://host/doc> (<urn:uuid:…> ["etag"]) (Not <DAV:no-lock>)
/// ```
package struct IfHeader: Sendable, Equatable {
    /// One condition: a state token (a lock token) or an entity tag, possibly negated.
    package struct Condition: Sendable, Equatable {
        package enum Subject: Sendable, Equatable {
            case token(String)
            case entityTag(String)
        }
        package var negated: Bool
        package var subject: Subject
    }

    /// A parenthesised list; true when every condition is. `resource` is the tag before it (the
    /// raw URL or path), `nil` for the request's own resource.
    package struct List: Sendable, Equatable {
        package var resource: String?
        package var conditions: [Condition]
    }

    package var lists: [List]

    /// The lock tokens the header submits (named without `Not`): the tokens a change to a locked
    /// resource must present.
    package var submittedTokens: Set<String> {
        var tokens = Set<String>()
        for list in lists {
            for condition in list.conditions where !condition.negated {
                if case .token(let token) = condition.subject { tokens.insert(token) }
            }
        }
        return tokens
    }

    /// The longest header read; past it the header is malformed (400).
    package static let maximumLength = 16 * 1024
    /// The most lists and conditions one header holds.
    package static let maximumConditions = 256

    /// Parses the header; `nil` when it is malformed.
    package static func parse(_ text: String) -> IfHeader? {
        guard text.utf8.count <= maximumLength else { return nil }
        var scanner = Scanner(Array(text.utf8))
        var lists: [List] = []
        var tag: String?
        var tagged: Bool?
        var count = 0
        while true {
            scanner.skipSpace()
            guard let byte = scanner.peek() else { break }
            if byte == UInt8(ascii: "<") {
                // A resource tag: every list after it, until the next tag, is about that resource.
                guard tagged != false, let value = scanner.angled() else { return nil }
                tagged = true
                tag = value
                scanner.skipSpace()
                guard scanner.peek() == UInt8(ascii: "(") else { return nil }
            } else if byte == UInt8(ascii: "(") {
                if tagged == nil { tagged = false }
                scanner.advance()
                var conditions: [Condition] = []
                while true {
                    scanner.skipSpace()
                    guard let next = scanner.peek() else { return nil }
                    if next == UInt8(ascii: ")") { scanner.advance(); break }
                    var negated = false
                    if scanner.consumeKeyword("not") {
                        negated = true
                        scanner.skipSpace()
                    }
                    switch scanner.peek() {
                    case UInt8(ascii: "<"):
                        guard let token = scanner.angled() else { return nil }
                        conditions.append(Condition(negated: negated, subject: .token(token)))
                    case UInt8(ascii: "["):
                        guard let entityTag = scanner.bracketed() else { return nil }
                        conditions.append(Condition(negated: negated, subject: .entityTag(entityTag)))
                    default:
                        return nil
                    }
                    count += 1
                    guard count <= maximumConditions else { return nil }
                }
                guard !conditions.isEmpty else { return nil }
                lists.append(List(resource: tag, conditions: conditions))
            } else {
                return nil
            }
        }
        return lists.isEmpty ? nil : IfHeader(lists: lists)
    }

    /// Whether the header is true: some list whose every condition holds (RFC 4918 section
    /// 10.4.3). `resolve` turns a list's tag into a path (`nil` tag: the request's resource;
    /// `nil` result: a resource not on this server, whose lists are false); `entityTag` gives a
    /// path's current entity tag (`nil`: none, as for a folder or nothing); `holdsToken` says
    /// whether a lock token names a lock on a path.
    package func evaluate(resolve: (String?) -> String?, entityTag: (String) async -> String?,
                  holdsToken: (String, String) -> Bool) async -> Bool {
        for list in lists {
            guard let path = resolve(list.resource) else { continue }
            var holds = true
            var tag: String??
            for condition in list.conditions {
                let matches: Bool
                switch condition.subject {
                case .token(let token):
                    matches = holdsToken(token, path)
                case .entityTag(let wanted):
                    if tag == nil { tag = .some(await entityTag(path)) }
                    matches = tag.flatMap { $0 }.map { EntityTag.weakEqual($0, wanted) } ?? false
                }
                if matches == condition.negated { holds = false; break }
            }
            if holds { return true }
        }
        return false
    }

    /// A byte scanner over the header.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }
        mutating func advance() { index += 1 }

        mutating func skipSpace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0d || byte == 0x0a { index += 1 }
        }

        /// `Not`, case-insensitively, followed by a space or a condition.
        mutating func consumeKeyword(_ word: String) -> Bool {
            let letters = Array(word.utf8)
            guard index + letters.count <= bytes.count else { return false }
            for (offset, letter) in letters.enumerated() where bytes[index + offset] | 0x20 != letter { return false }
            index += letters.count
            return true
        }

        /// `<…>`: the text between, without the brackets.
        mutating func angled() -> String? { delimited(UInt8(ascii: "<"), UInt8(ascii: ">")) }

        /// `[…]`: an entity tag, quotes kept.
        mutating func bracketed() -> String? { delimited(UInt8(ascii: "["), UInt8(ascii: "]")) }

        private mutating func delimited(_ open: UInt8, _ close: UInt8) -> String? {
            guard peek() == open else { return nil }
            let start = index + 1
            var end = start
            while end < bytes.count, bytes[end] != close {
                if bytes[end] == open { return nil }
                end += 1
            }
            guard end < bytes.count, end > start else { return nil }
            index = end + 1
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }
    }
}
