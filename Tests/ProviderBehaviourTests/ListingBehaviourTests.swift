import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

@Suite("Listing and attributes")
struct ListingBehaviourTests {
    @Test("an empty folder lists no entries and ends with a last page", arguments: ProviderFixture.all)
    func listEmptyFolder(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.createFolder(path: s.path("empty"), withIntermediateDirectories: false)
            var pages: [ListingPage] = []
            for try await page in s.provider.contentsOfDirectory(path: s.path("empty")) { pages.append(page) }
            #expect(pages.flatMap(\.entries).isEmpty)
            #expect(pages.last?.isLast == true)
        }
    }

    @Test("a folder lists its files and subfolders with types and sizes", arguments: ProviderFixture.all)
    func listNonEmptyFolder(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.writeContents(path: s.path("one.txt"), data: Data("1".utf8))
            try await s.provider.writeContents(path: s.path("two.bin"), data: Data(count: 300))
            try await s.provider.createFolder(path: s.path("sub"), withIntermediateDirectories: false)
            let entries = try await s.provider.contentsOfDirectory(path: s.base).collectAll()
            #expect(Set(entries.map(\.name)) == ["one.txt", "two.bin", "sub"])
            let byName = Dictionary(uniqueKeysWithValues: entries.map { ($0.name, $0) })
            #expect(byName["one.txt"]?.type == .file)
            #expect(byName["one.txt"]?.size == 1)
            #expect(byName["two.bin"]?.size == 300)
            #expect(byName["sub"]?.type == .directory)
            #expect(byName["one.txt"]?.path == s.path("one.txt"))
            #expect(byName["one.txt"]?.modificationDate != nil)
        }
    }

    @Test("listing a missing folder fails with not found", arguments: ProviderFixture.all)
    func listMissingFolder(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            await expectFailure(.notFound) {
                _ = try await s.provider.contentsOfDirectory(path: s.path("nope")).collectAll()
            }
        }
    }

    /// `gateway ls` lists first and only describes the path when that fails this way, so a
    /// provider must never answer a file's listing with an empty folder (or the file itself).
    @Test("listing a file fails with not a directory", arguments: ProviderFixture.all)
    func listFile(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.writeContents(path: s.path("plain.txt"), data: Data("p".utf8))
            await expectFailure(.notADirectory) {
                _ = try await s.provider.contentsOfDirectory(path: s.path("plain.txt")).collectAll()
            }
        }
    }

    @Test("pages hold at most pageSize entries, and the last non-empty page is marked last", arguments: ProviderFixture.all)
    func pageSizes(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.createFolder(path: s.path("pages"), withIntermediateDirectories: false)
            try await s.provider.createFolder(path: s.path("empty"), withIntermediateDirectories: false)
            for index in 0..<23 {
                try await s.provider.writeContents(path: s.path("pages/p\(index)"), data: Data([UInt8(index)]))
            }
            for (size, expected) in [(10, [10, 10, 3]), (23, [23]), (1, Array(repeating: 1, count: 23)), (100, [23])] {
                var sizes: [Int] = []
                var lastFlags: [Bool] = []
                for try await page in s.provider.contentsOfDirectory(path: s.path("pages"), pageSize: size) {
                    sizes.append(page.entries.count)
                    lastFlags.append(page.isLast)
                }
                #expect(sizes == expected, "page size \(size)")
                #expect(lastFlags == sizes.indices.map { $0 == sizes.count - 1 }, "page size \(size): \(lastFlags)")
            }
            var emptyPages: [ListingPage] = []
            for try await page in s.provider.contentsOfDirectory(path: s.path("empty"), pageSize: 5) { emptyPages.append(page) }
            #expect(emptyPages.count == 1 && emptyPages.first?.isLast == true && emptyPages.first?.entries.isEmpty == true)
        }
    }

    @Test("a large folder arrives in several pages, every entry exactly once", arguments: ProviderFixture.all)
    func listInPages(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.createFolder(path: s.path("many"), withIntermediateDirectories: false)
            for index in 0..<45 {
                try await s.provider.writeContents(path: s.path("many/f\(index)"), data: Data([UInt8(index)]))
            }
            var names: [String] = []
            var pageCount = 0
            var sawLast = false
            for try await page in s.provider.contentsOfDirectory(path: s.path("many"), pageSize: 10) {
                #expect(!sawLast, "no page may follow the last one")
                pageCount += 1
                names += page.entries.map(\.name)
                sawLast = page.isLast
            }
            #expect(sawLast)
            #expect(names.count == 45)
            #expect(Set(names).count == 45)
            #expect(pageCount >= 2)
            // An unchanged folder lists in the same order every time (whatever its page size); Local's
            // order is the names' byte order.
            let again = try await s.provider.contentsOfDirectory(path: s.path("many"), pageSize: 7).collectAll().map(\.name)
            #expect(again == names)
            if s.provider is LocalFileProvider {
                #expect(names == names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            }
        }
    }

    @Test("Local lists in name order: byte order of the UTF-8 names, across pages")
    func localNameOrder() async throws {
        try await ProviderFixture.local.run { s in
            let names = ["b", "a", "C", "\u{e9}t\u{e9}", "10", "9", ".hidden", "a b", "Z"]
            for name in names { try await s.provider.writeContents(path: s.path(name), data: Data()) }
            try await s.provider.createFolder(path: s.path("m"), withIntermediateDirectories: false)
            let listed = try await s.provider.contentsOfDirectory(path: s.base, pageSize: 2).collectAll().map(\.name)
            #expect(listed == [".hidden", "10", "9", "C", "Z", "a", "a b", "b", "m", "\u{e9}t\u{e9}"])
        }
    }

    @Test("stat describes files and folders; a missing item is not found", arguments: ProviderFixture.all)
    func statItems(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.writeContents(path: s.path("f.txt"), data: Data("hello".utf8))
            try await s.provider.createFolder(path: s.path("d"), withIntermediateDirectories: false)
            let file = try await s.provider.attributesOfItem(path: s.path("f.txt"))
            #expect(file.type == .file)
            #expect(file.size == 5)
            #expect(file.name == "f.txt")
            #expect(file.path == s.path("f.txt"))
            #expect(file.versionTag != nil)
            let folder = try await s.provider.attributesOfItem(path: s.path("d"))
            #expect(folder.type == .directory)
            await expectFailure(.notFound) { _ = try await s.provider.attributesOfItem(path: s.path("missing")) }
        }
    }

    @Test("walk visits parents before children; search filters by closure and Predicate", arguments: ProviderFixture.all)
    func walkAndSearch(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            try await s.provider.createFolder(path: s.path("t/a/b"), withIntermediateDirectories: true)
            try await s.provider.writeContents(path: s.path("t/a/b/deep.txt"), data: Data("x".utf8))
            try await s.provider.writeContents(path: s.path("t/top.txt"), data: Data("y".utf8))
            try await s.provider.writeContents(path: s.path("t/a/skip.bin"), data: Data("z".utf8))
            var seen: [String] = []
            for try await item in s.provider.walk(path: s.path("t")) {
                seen.append(RemotePath.relative(item.path, to: s.path("t"))!)
            }
            #expect(Set(seen) == ["a", "a/b", "a/b/deep.txt", "top.txt", "a/skip.bin"])
            #expect(seen.firstIndex(of: "a")! < seen.firstIndex(of: "a/b")!)
            #expect(seen.firstIndex(of: "a/b")! < seen.firstIndex(of: "a/b/deep.txt")!)

            var found: [String] = []
            for try await item in s.provider.searchFiles(path: s.path("t"), recursive: true, matching: { $0.name.hasSuffix(".txt") }) {
                found.append(item.name)
            }
            #expect(Set(found) == ["deep.txt", "top.txt"])

            let predicate = #Predicate<FileObject> { $0.name.contains("skip") }
            var byPredicate: [String] = []
            for try await item in s.provider.searchFiles(path: s.path("t"), recursive: true, matching: predicate) {
                byPredicate.append(item.name)
            }
            #expect(byPredicate == ["skip.bin"])

            var shallow: [String] = []
            for try await item in s.provider.searchFiles(path: s.path("t"), recursive: false, matching: { _ in true }) {
                shallow.append(item.name)
            }
            #expect(Set(shallow) == ["a", "top.txt"])
        }
    }

    @Test("names with special characters survive write, list, stat, read and delete", arguments: ProviderFixture.all)
    func specialCharacterNames(fixture: ProviderFixture) async throws {
        var names = ["a b.txt", "naïve café.txt", "#hash", "100%", "what?.txt", ".hidden", "rocket 🚀", "plus+and&amp",
                     "semi;colon", "quote'\"", "percent%20encoded", "日本語", "tab\tname", "back\\slash", "ends with space "]
        if !fixture.controlCharactersInNames { names.removeAll { $0.contains("\t") } }
        try await fixture.run { s in
            try await s.provider.createFolder(path: s.path("names"), withIntermediateDirectories: false)
            if !fixture.controlCharactersInNames {
                await expectFailure(.invalidInput) { try await s.provider.writeContents(path: s.path("names/tab\tname"), data: Data("t".utf8)) }
            }
            for (index, name) in names.enumerated() {
                try await s.provider.writeContents(path: s.path("names/" + name), data: Data("\(index)".utf8))
            }
            let listed = try await s.provider.contentsOfDirectory(path: s.path("names")).collectAll()
            // A server whose listings hide dot files (nginx) still answers for each by name, below.
            #expect(Set(listed.map(\.name)) == Set(names).filter { fixture.listsDotFiles || !$0.hasPrefix(".") })
            for (index, name) in names.enumerated() {
                let item = try await s.provider.attributesOfItem(path: s.path("names/" + name))
                #expect(item.name == name)
                let data = try await s.provider.contents(path: s.path("names/" + name))
                #expect(data == Data("\(index)".utf8), "contents of \(name)")
            }
            #expect(try await s.provider.attributesOfItem(path: s.path("names/.hidden")).isHidden)
            if fixture.listsDotFiles { #expect(listed.first { $0.name == ".hidden" }?.isHidden == true) }
            for name in names { try await s.provider.removeItem(path: s.path("names/" + name), recursive: false) }
            #expect(try await s.provider.contentsOfDirectory(path: s.path("names")).collectAll().isEmpty)
        }
    }

    /// Fixtures whose server answers RFC 4331 quota properties without the provider claiming quota.
    static let quotaWithoutClaim: Set<String> = ["webdav-wsgidav"]

    @Test("storage properties report figures when the provider declares quota", arguments: ProviderFixture.all)
    func quota(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            guard s.provider.capabilities.supports(.quota) else {
                // Not claimed (WebDAV can't know before it asks: RFC 4331 quota properties are the
                // server's choice): the servers that answer them give figures, named here; every
                // other one fails with a clear "unsupported", never figures made up.
                if Self.quotaWithoutClaim.contains(fixture.name) {
                    let volume = try await s.provider.storageProperties()
                    #expect(volume.availableCapacity != nil, "\(fixture.name): \(volume)")
                } else {
                    await expectFailure(.unsupported) { _ = try await s.provider.storageProperties() }
                }
                return
            }
            let volume = try await s.provider.storageProperties()
            #expect(!volume.isEmpty)
            if let total = volume.totalCapacity, let free = volume.availableCapacity { #expect(free <= total) }
            #expect(await s.provider.isReachable())
        }
    }
}
