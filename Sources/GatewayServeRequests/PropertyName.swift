/// A WebDAV property's (or element's) name: its namespace and local name.
package struct PropertyName: Hashable, Sendable {
    package var namespace: String
    package var name: String

    package init(namespace: String, name: String) {
        self.namespace = namespace
        self.name = name
    }

    /// A name in the `DAV:` namespace.
    package static func dav(_ name: String) -> PropertyName { PropertyName(namespace: "DAV:", name: name) }
}
