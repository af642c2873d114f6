package import Foundation

/// A `PROPPATCH` body (RFC 4918 section 9.2): properties to set, with their values as XML, and
/// properties to remove, in document order. No document type or entity is accepted; nesting and
/// the number of properties are bounded.
package struct PropertyUpdate: Sendable, Equatable {
    package enum Operation: Sendable, Equatable {
        case set(PropertyName, value: String)
        case remove(PropertyName)

        package var name: PropertyName {
            switch self {
            case .set(let name, _), .remove(let name): return name
            }
        }
    }

    package var operations: [Operation]

    /// Why a body was refused.
    package enum ParseError: Error { case malformed(String) }

    /// The most properties one request sets or removes.
    package static let maximumOperations = 1000

    package static func parse(_ body: Data) throws -> PropertyUpdate {
        let reader = Reader()
        do {
            try XMLEventReader.read(body, maximumDepth: 64, into: reader)
        } catch {
            throw ParseError.malformed(error.description)
        }
        return PropertyUpdate(operations: reader.operations)
    }

    /// Reads the events, re-writing each property's value as self-contained XML (every element
    /// declares its own namespace).
    private final class Reader: XMLEventHandler {
        var operations: [Operation] = []
        /// The open element at depth 1 (`set` or `remove`, else ignored).
        private var section: PropertyName?
        private var inProp = false
        private var property: PropertyName?
        private var value = XMLFragment()

        func start(_ element: PropertyName, attributes: [XMLAttribute], depth: Int) throws(XMLEventReader.Failure) {
            switch depth {
            case 0:
                guard element == .dav("propertyupdate") else { throw XMLEventReader.Failure("the root element is not DAV:propertyupdate") }
            case 1:
                section = element
            case 2:
                inProp = element == .dav("prop") && (section == .dav("set") || section == .dav("remove"))
            case 3:
                guard inProp else { return }
                guard operations.count < PropertyUpdate.maximumOperations else {
                    throw XMLEventReader.Failure("more than \(PropertyUpdate.maximumOperations) properties")
                }
                property = element
                value = XMLFragment()
            default:
                if property != nil { value.open(element, depth: depth, attributes: attributes) }
            }
        }

        func end(_ element: PropertyName, depth: Int) {
            if depth == 3, let property {
                operations.append(section == .dav("set") ? .set(property, value: value.text) : .remove(property))
                self.property = nil
            } else if depth > 3, property != nil {
                value.close(element, depth: depth)
            } else if depth == 2 {
                inProp = false
            }
        }

        func text(_ text: String) {
            if property != nil { value.characters(text) }
        }
    }
}
