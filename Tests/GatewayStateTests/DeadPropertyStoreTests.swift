import Foundation
import GatewayCore
@testable import GatewayState
import Testing

/// Dead properties of `gateway serve webdav`: set and removed together, and following their items
/// through removals, moves and copies, without touching look-alike names or other remotes.
@Suite("Dead property store")
struct DeadPropertyStoreTests {
    @Test("update, remove under a folder, move and copy a tree; neighbours and other scopes stay")
    func followsItems() throws {
        let folder = try StateStoreTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try DeadPropertyStore.open(directory: URL(fileURLWithPath: folder), scope: "http://a/")
        let other = try DeadPropertyStore.open(directory: URL(fileURLWithPath: folder), scope: "http://b/")
        func prop(_ name: String, _ value: String = "v") -> DeadProperty { DeadProperty(namespace: "urn:x", name: name, value: value) }
        try store.update("/d", [.set(prop("top"))])
        try store.update("/d/f", [.set(prop("one", "<x:y xmlns:x=\"urn:y\">é</x:y>")), .set(prop("two"))])
        try store.update("/d0", [.set(prop("neighbour"))])   // "/d0" sorts right after "/d/"
        try store.update("/dx", [.set(prop("neighbour"))])
        try other.update("/d/f", [.set(prop("elsewhere"))])
        #expect(try store.properties(of: "/d/f").map(\.name) == ["one", "two"])
        #expect(try store.properties(of: "/d/f").first?.value == "<x:y xmlns:x=\"urn:y\">é</x:y>")
        try store.update("/d/f", [.set(prop("two", "new")), .remove(namespace: "urn:x", name: "one"), .remove(namespace: "urn:x", name: "absent")])
        #expect(try store.properties(of: "/d/f") == [prop("two", "new")])
        // In order: removed then set is set; set then removed is gone.
        try store.update("/d/f", [.remove(namespace: "urn:x", name: "three"), .set(prop("three")), .set(prop("four")), .remove(namespace: "urn:x", name: "four")])
        #expect(try store.properties(of: "/d/f").map(\.name) == ["three", "two"])
        try store.update("/d/f", [.remove(namespace: "urn:x", name: "three")])

        try store.transfer(from: "/d", to: "/e", keepSource: true)
        #expect(try store.properties(of: "/e") == [prop("top")])
        #expect(try store.properties(of: "/e/f") == [prop("two", "new")])
        #expect(try store.properties(of: "/d/f") == [prop("two", "new")], "a copy keeps the source's")
        try store.transfer(from: "/e", to: "/g", keepSource: false)
        #expect(try store.properties(of: "/e/f").isEmpty && store.properties(of: "/g/f") == [prop("two", "new")])

        try store.removeAll(under: "/d")
        #expect(try store.properties(of: "/d").isEmpty && store.properties(of: "/d/f").isEmpty)
        #expect(try store.properties(of: "/d0") == [prop("neighbour")] && store.properties(of: "/dx") == [prop("neighbour")])
        #expect(try other.properties(of: "/d/f") == [prop("elsewhere")], "another remote's are apart")
    }
}
