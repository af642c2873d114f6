package import Foundation

/// A write lock's scope: one holder, or several.
package enum LockScope: String, Sendable {
    case exclusive, shared
}

/// A `LOCK` body (RFC 4918 section 9.10): a `DAV:lockinfo` with the scope, the type (`write`, the
/// only one there is) and the owner the client wants shown in `DAV:lockdiscovery`. No document
/// type or entity is accepted; nesting and the owner's size are bounded.
package struct LockRequest: Sendable, Equatable {
    package var scope: LockScope
    /// The `DAV:owner` element's content, as self-contained XML (empty for none).
    package var owner: String

    /// Why a body was refused.
    package enum ParseError: Error { case malformed(String) }

    /// The most owner XML kept, in bytes.
    package static let maximumOwner = 16 * 1024

    package static func parse(_ body: Data) throws -> LockRequest {
        let reader = Reader()
        do {
            try XMLEventReader.read(body, maximumDepth: 32, into: reader)
        } catch {
            throw ParseError.malformed(error.description)
        }
        guard let scope = reader.scope else { throw ParseError.malformed("no DAV:lockscope") }
        guard reader.sawWriteType else { throw ParseError.malformed("the DAV:locktype is not DAV:write") }
        return LockRequest(scope: scope, owner: reader.owner.text)
    }

    private final class Reader: XMLEventHandler {
        var scope: LockScope?
        var sawWriteType = false
        var owner = XMLFragment()
        /// The open element at depth 1 (`lockscope`, `locktype`, `owner`).
        private var section: PropertyName?

        func start(_ element: PropertyName, attributes: [XMLAttribute], depth: Int) throws(XMLEventReader.Failure) {
            switch depth {
            case 0:
                guard element == .dav("lockinfo") else { throw XMLEventReader.Failure("the root element is not DAV:lockinfo") }
            case 1:
                section = element
            case 2 where section == .dav("lockscope"):
                if element == .dav("exclusive") { scope = .exclusive } else if element == .dav("shared") { scope = .shared }
            case 2 where section == .dav("locktype"):
                if element == .dav("write") { sawWriteType = true }
            default:
                if section == .dav("owner") { owner.open(element, depth: depth, attributes: attributes) }
            }
            try checkSize()
        }

        func end(_ element: PropertyName, depth: Int) {
            if depth == 1 {
                section = nil
            } else if depth >= 2, section == .dav("owner") {
                owner.close(element, depth: depth)
            }
        }

        func text(_ text: String) throws(XMLEventReader.Failure) {
            if section == .dav("owner") { owner.characters(text) }
            try checkSize()
        }

        private func checkSize() throws(XMLEventReader.Failure) {
            if owner.text.utf8.count > LockRequest.maximumOwner { throw XMLEventReader.Failure("the owner is larger than \(LockRequest.maximumOwner) bytes") }
        }
    }
}
