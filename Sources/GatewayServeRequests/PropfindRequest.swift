package import Foundation

/// What a `PROPFIND` body asks for (RFC 4918 section 9.1): every property, their names, or a list.
package enum PropfindRequest: Sendable, Equatable {
    case allProperties
    case propertyNames
    case properties([PropertyName])

    /// The most properties one request names.
    package static let maximumProperties = 1000

    /// Parses a `PROPFIND` body; an empty one asks for every property. No document type or
    /// entity is accepted, and nesting is bounded (``XMLEventReader``).
    package static func parse(_ body: Data) throws -> PropfindRequest {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }) { return .allProperties }
        let reader = Reader()
        do {
            try XMLEventReader.read(body, maximumDepth: 32, into: reader)
        } catch {
            throw PropfindError.malformed(error.description)
        }
        guard let result = reader.result else { throw PropfindError.malformed("no DAV:allprop, DAV:propname or DAV:prop") }
        return result
    }

    /// Why a body was refused.
    package enum PropfindError: Error { case malformed(String) }

    private final class Reader: XMLEventHandler {
        var result: PropfindRequest?
        var names: [PropertyName] = []
        var inProp = false

        func start(_ element: PropertyName, attributes: [XMLAttribute], depth: Int) throws(XMLEventReader.Failure) {
            switch depth {
            case 0:
                guard element == .dav("propfind") else { throw XMLEventReader.Failure("the root element is not DAV:propfind") }
            case 1:
                switch element {
                case .dav("allprop"): result = .allProperties
                case .dav("propname"): result = .propertyNames
                case .dav("prop"): inProp = true
                default: break   // (DAV:include and unknown elements are ignored)
                }
            case 2 where inProp:
                if names.count < PropfindRequest.maximumProperties { names.append(element) }
            default:
                break
            }
        }

        func end(_ element: PropertyName, depth: Int) {
            if depth == 1, element == .dav("prop"), inProp {
                inProp = false
                result = .properties(names)
            }
        }

        func text(_ text: String) {}
    }
}
