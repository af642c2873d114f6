import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A `PROPPATCH` body (RFC 4918 section 9.2): properties to set, with their values as XML, and
/// properties to remove, in document order. External entities are never resolved, nesting and the
/// number of properties are bounded.
struct PropertyUpdate: Sendable, Equatable {
    enum Operation: Sendable, Equatable {
        case set(PropertyName, value: String)
        case remove(PropertyName)

        var name: PropertyName {
            switch self {
            case .set(let name, _), .remove(let name): return name
            }
        }
    }

    var operations: [Operation]

    enum ParseError: Error { case malformed(String) }

    static func parse(_ body: Data) throws -> PropertyUpdate {
        let parser = XMLParser(data: body)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        let reader = Reader()
        parser.delegate = reader
        guard parser.parse(), reader.failure == nil, reader.sawRoot else {
            throw ParseError.malformed(reader.failure ?? parser.parserError.map { "\($0)" } ?? "not a propertyupdate body")
        }
        return PropertyUpdate(operations: reader.operations)
    }

    /// Reads the events, re-writing each property's value as self-contained XML (every element
    /// declares its own namespace).
    private final class Reader: NSObject, XMLParserDelegate {
        var operations: [Operation] = []
        var failure: String?
        var sawRoot = false
        private var stack: [PropertyName] = []
        private var setting = false
        private var property: PropertyName?
        private var value = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            let element = PropertyName(namespace: namespaceURI ?? "", name: name)
            defer { stack.append(element) }
            guard stack.count < 64, operations.count < 1000 else { fail("too deep or too many properties", parser); return }
            switch stack.count {
            case 0:
                guard element == .dav("propertyupdate") else { fail("the root element is not DAV:propertyupdate", parser); return }
                sawRoot = true
            case 1:
                guard element == .dav("set") || element == .dav("remove") else { return }
                setting = element == .dav("set")
            case 2:
                break   // DAV:prop
            case 3:
                guard stack[1] == .dav("set") || stack[1] == .dav("remove"), stack[2] == .dav("prop") else { return }
                property = element
                value = ""
            default:
                guard property != nil else { return }
                let prefix = "v\(stack.count)"
                value += element.namespace.isEmpty ? "<\(name) xmlns=\"\"" : "<\(prefix):\(name) xmlns:\(prefix)=\"\(ServeText.xml(element.namespace))\""
                for (key, attribute) in attributes.sorted(by: { $0.key < $1.key }) where !key.hasPrefix("xmlns") {
                    value += " \(key)=\"\(ServeText.xml(attribute))\""
                }
                value += ">"
            }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard let element = stack.popLast() else { return }
            if stack.count == 3, let property, property == element {
                operations.append(setting ? .set(property, value: value) : .remove(property))
                self.property = nil
            } else if stack.count > 3, property != nil {
                value += element.namespace.isEmpty ? "</\(element.name)>" : "</v\(stack.count):\(element.name)>"
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if property != nil, stack.count > 3 { value += ServeText.xml(string) }
        }

        func parser(_ parser: XMLParser, foundCDATA block: Data) {
            if property != nil, stack.count > 3 { value += ServeText.xml(String(decoding: block, as: UTF8.self)) }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if failure == nil { failure = "\(parseError)" }
        }

        private func fail(_ message: String, _ parser: XMLParser) {
            failure = message
            parser.abortParsing()
        }
    }
}
