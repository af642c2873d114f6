import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A property's name: its namespace and local name.
struct PropertyName: Hashable, Sendable {
    var namespace: String
    var name: String

    static func dav(_ name: String) -> PropertyName { PropertyName(namespace: "DAV:", name: name) }
}

/// What a `PROPFIND` body asks for (RFC 4918 section 9.1): every property, their names, or a list.
enum PropfindRequest: Sendable, Equatable {
    case allProperties
    case propertyNames
    case properties([PropertyName])

    /// Parses a `PROPFIND` body; an empty one asks for every property. External entities are never
    /// resolved, and nesting is bounded.
    static func parse(_ body: Data) throws -> PropfindRequest {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }) { return .allProperties }
        let parser = XMLParser(data: body)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        let reader = Reader()
        parser.delegate = reader
        guard parser.parse(), reader.failure == nil, let result = reader.result else {
            throw PropfindError.malformed(reader.failure ?? parser.parserError.map { "\($0)" } ?? "not a propfind body")
        }
        return result
    }

    enum PropfindError: Error { case malformed(String) }

    private final class Reader: NSObject, XMLParserDelegate {
        var stack: [PropertyName] = []
        var result: PropfindRequest?
        var names: [PropertyName] = []
        var failure: String?

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            let element = PropertyName(namespace: namespaceURI ?? "", name: name)
            defer { stack.append(element) }
            guard stack.count < 32 else { failure = "nested too deeply"; parser.abortParsing(); return }
            switch stack.count {
            case 0:
                if element != .dav("propfind") { failure = "the root element is not DAV:propfind"; parser.abortParsing() }
            case 1:
                switch element {
                case .dav("allprop"): result = .allProperties
                case .dav("propname"): result = .propertyNames
                case .dav("prop"): result = .properties([])
                default: break   // (DAV:include and unknown elements are ignored)
                }
            case 2 where stack.last == .dav("prop"):
                if names.count < 1000 { names.append(element) }
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            _ = stack.popLast()
            if stack.count == 1, name == "prop", namespaceURI == "DAV:" { result = .properties(names) }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if failure == nil { failure = "\(parseError)" }
        }
    }
}
