import GatewayCore

/// XML re-written from parser events as a self-contained fragment: every element and attribute
/// declares its own namespace, so the fragment means the same wherever it is pasted (a dead
/// property's value, a lock's `DAV:owner`).
struct XMLFragment: Sendable {
    private(set) var text = ""

    private static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"

    /// An element starts, `depth` levels into the document (names its namespace prefix).
    mutating func open(_ element: PropertyName, depth: Int, attributes: [XMLAttribute]) {
        text += element.namespace.isEmpty ? "<\(element.name) xmlns=\"\""
            : "<v\(depth):\(element.name) xmlns:v\(depth)=\"\(Self.escaped(element.namespace))\""
        for (index, attribute) in attributes.enumerated() {
            let name: String
            switch attribute.name.namespace {
            case "": name = attribute.name.name
            case Self.xmlNamespace: name = "xml:" + attribute.name.name
            default:
                name = "a\(index):\(attribute.name.name)"
                text += " xmlns:a\(index)=\"\(Self.escaped(attribute.name.namespace))\""
            }
            text += " \(name)=\"\(Self.escaped(attribute.value))\""
        }
        text += ">"
    }

    /// The element opened at `depth` ends.
    mutating func close(_ element: PropertyName, depth: Int) {
        text += element.namespace.isEmpty ? "</\(element.name)>" : "</v\(depth):\(element.name)>"
    }

    /// Character data (escaped).
    mutating func characters(_ string: String) { text += Self.escaped(string) }

    private static func escaped(_ text: String) -> String { XMLText.escaped(text, replacingInvalid: true) }
}
