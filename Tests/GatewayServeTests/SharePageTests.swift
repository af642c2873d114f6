import Foundation
import GatewayCore
import HTTPTypes
import HummingbirdCore
import NIOCore
import GatewayLocal
import GatewayServeRequests
@testable import GatewayServe
@testable import GatewayTestSupport
import Testing

/// The share page's pieces on a real folder: pages chosen while the listing streams (every entry
/// once, in order, both ways), the page's escaping, and the streamed ZIP checked by `unzip`.
@Suite("Share page: folder pages and ZIP downloads")
struct SharePageTests {
    /// A local folder with `files` files of distinct sizes (in scrambled name order) and 3 folders.
    private static func folder(files: Int) throws -> (TemporaryFolder, LocalFileProvider) {
        let base = try TemporaryFolder.make(prefix: "gateway-share-page")
        for index in 0..<files {
            // Sizes run against names, so the name and size orders differ.
            let size = (index * 37) % files
            try Data(repeating: 0x61, count: size).write(to: URL(fileURLWithPath: base.path + "/f-\(String(format: "%04d", index)).txt"))
        }
        for name in ["Zeta", "alpha", "Mid"] {
            try FileManager.default.createDirectory(atPath: base.path + "/" + name, withIntermediateDirectories: false)
        }
        return (base, try LocalFileProvider(name: "page", root: base.path))
    }

    /// A local folder holding a file of one byte under each of `names`.
    private static func folder(named names: [String]) throws -> (TemporaryFolder, LocalFileProvider) {
        let base = try TemporaryFolder.make(prefix: "gateway-share-page")
        for name in names {
            try Data("x".utf8).write(to: URL(fileURLWithPath: base.path + "/" + name))
        }
        return (base, try LocalFileProvider(name: "page", root: base.path))
    }

    @Test("paging forward and back visits every entry once, folders first, in the order asked", arguments: [
        (FolderPageQuery.Sort.name, false), (.name, true), (.size, false), (.size, true), (.date, true),
    ])
    func pagesVisitEveryEntryOnce(sort: FolderPageQuery.Sort, descending: Bool) async throws {
        let (base, provider) = try Self.folder(files: 250)
        defer { base.remove() }
        var query = FolderPageQuery()
        query.sort = sort
        query.descending = descending
        var seen: [FileObject] = []
        var pages: [[String]] = []
        var page = try await FolderPage.read(provider, path: "/", query: query, pageSize: 40)
        while true {
            #expect(page.total == 253)
            #expect(page.before == seen.count)
            #expect(page.items.count <= 40)
            seen += page.items
            pages.append(page.items.map(\.name))
            guard page.hasNext, let last = page.items.last else { break }
            query.slice = .after(FolderSortKey(last, sort: sort))
            page = try await FolderPage.read(provider, path: "/", query: query, pageSize: 40)
        }
        #expect(seen.count == 253)
        #expect(Set(seen.map(\.name)).count == 253)
        let leadingFolders = seen.prefix(3).filter { $0.isDirectory }.count
        #expect(leadingFolders == 3)
        let keys = seen.map { FolderSortKey($0, sort: sort) }
        for (earlier, later) in Swift.zip(keys, keys.dropFirst()) {
            #expect(earlier.precedes(later, descending: descending), "\(earlier.name) before \(later.name)")
        }
        if sort == .size {
            let sizes = seen.dropFirst(3).map { $0.size ?? -1 }
            #expect(sizes == (descending ? sizes.sorted(by: >) : sizes.sorted()))
        }
        // Back from the last page with "before" gives the same pages in reverse.
        var back = pages.count - 1
        var first = seen[seen.count - pages[back].count]
        while back > 0 {
            query.slice = .before(FolderSortKey(first, sort: sort))
            let previous = try await FolderPage.read(provider, path: "/", query: query, pageSize: 40)
            back -= 1
            #expect(previous.items.map(\.name) == pages[back])
            #expect(previous.before == back * 40)
            #expect(previous.hasNext)
            guard let head = previous.items.first else { break }
            first = head
        }
    }

    @Test("cursors and queries survive a round trip; hostile values fall back to the defaults")
    func queries() {
        let key = FolderSortKey(isFolder: false, value: 42, name: "a.b & c?d=e")
        #expect(FolderSortKey(cursor: key.cursor) == key)
        let text = FolderPageQuery().string(sort: .size, descending: true, view: .gallery, slice: .after(key))
        let parsed = FolderPageQuery(FolderPageQuery.parameters(String(text.dropFirst())))
        #expect(parsed.sort == .size && parsed.descending && parsed.view == .gallery && parsed.slice == .after(key))
        let hostile = FolderPageQuery(FolderPageQuery.parameters("sort=../../x&order=up&view=<b>&after=z.1.x&before="))
        #expect(hostile == FolderPageQuery())
        #expect(FolderSortKey(cursor: "f.99999999999999999999.x") == nil)
        #expect(FolderPageQuery.parameters(String(repeating: "a=b&", count: 5000)).isEmpty)
    }

    @Test("the folder page escapes names and never shows more than a page of rows")
    func pageEscapes() async throws {
        let (base, provider) = try Self.folder(named: ["<b>bold<i>.txt", "a & b.txt", "\"q\" 'single'.txt", "שלום.txt"])
        defer { base.remove() }
        let browser = ShareBrowser(provider: provider, paths: try ServePaths(root: "/", basePath: "/s/TOKEN/share"), title: "My <share>",
                                   zipLimit: 1 << 30, thumbnails: nil, cacheScope: "page", publicShare: true, logger: .init(label: "test"))
        let folder = try await provider.attributesOfItem(path: "/")
        let html = try await browser.folderPage(folder, path: "/", query: FolderPageQuery())
        #expect(html.contains("<title>My &lt;share&gt;</title>"))
        #expect(html.contains("&lt;b&gt;bold&lt;i&gt;.txt"))
        #expect(!html.contains("<b>bold"))
        #expect(html.contains("a &amp; b.txt"))
        #expect(html.contains("&quot;q&quot; &apos;single&apos;.txt"))
        #expect(html.contains("שלום.txt"))
        #expect(html.contains("href=\"/s/TOKEN/share/%3Cb%3Ebold%3Ci%3E.txt\""))
        #expect(html.contains("href=\"/s/TOKEN/share/a%20&amp;%20b.txt\""))
        #expect(html.contains("class=\"button download-all\" href=\"?download=zip\""))
        #expect(!html.contains("<script"))
        let policy = SharePageTemplates.contentSecurityPolicy
        #expect(policy.contains("default-src 'none'") && policy.contains("style-src 'sha256-") && !policy.contains("unsafe-inline"))
    }

    @Test("a quote with a combining mark, controls and bidirectional overrides cannot reach the page as markup")
    func hostileEscaping() {
        // swift-mustache's own escaping works on grapheme clusters: "\"\u{301}" was one and passed.
        let quote = SharePageTemplates.escape("p\"\u{301} data-x=1 a=\"")
        #expect(!quote.contains("\""))
        #expect(quote.hasPrefix("p&quot;\u{301} data-x=1"))
        #expect(SharePageTemplates.escape("invoice\u{202E}fdp.exe") == "invoice\u{FFFD}fdp.exe")
        #expect(SharePageTemplates.escape("a\u{1}b<") == "a\u{FFFD}b&lt;")
        let html = SharePageTemplates.render("message", ["title": "x\"\u{301} onload=y", "pageTitle": "t", "text": "z", "icon": "missing"])
        #expect(html.contains("<h1>x&quot;\u{301} onload=y</h1>"))
        #expect(ZipStream.entryName("..") == "_" && ZipStream.entryName(".") == "_" && ZipStream.entryName("") == "_")
        #expect(ZipStream.entryName("..\\..\\evil.txt") == ".._.._evil.txt")
        #expect(ZipStream.entryName("a\r\nb\u{202E}c") == "a__b_c")
        #expect(ZipStream.entryName("ünï code.txt") == "ünï code.txt")
    }

    @Test("names that differ only in their Unicode form (NFC, NFD) are two rows, each paged once")
    func unicodeForms() async throws {
        let (base, provider) = try Self.folder(named: ["caf\u{E9}.txt", "cafe\u{301}.txt", "a.txt", "z.txt"])
        defer { base.remove() }
        var query = FolderPageQuery()
        var seen: [[UInt8]] = []
        while true {
            let page = try await FolderPage.read(provider, path: "/", query: query, pageSize: 1)
            seen += page.items.map { Array($0.name.utf8) }
            guard page.hasNext, let last = page.items.last, seen.count < 10 else { break }
            query.slice = .after(FolderSortKey(last, sort: .name))
        }
        #expect(seen.count == 4)
        #expect(Set(seen).count == 4)
    }

    @Test("a public share shows, serves and zips plain files and folders only: no symbolic link out of it, no named pipe")
    func plainItemsOnly() async throws {
        let base = try TemporaryFolder.make(prefix: "gateway-share-page")
        defer { base.remove() }
        let manager = FileManager.default
        try manager.createDirectory(atPath: base.path + "/shared/sub", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: base.path + "/private", withIntermediateDirectories: true)
        try Data("secret".utf8).write(to: URL(fileURLWithPath: base.path + "/private/secret.txt"))
        try Data("fine".utf8).write(to: URL(fileURLWithPath: base.path + "/shared/sub/fine.txt"))
        try manager.createSymbolicLink(atPath: base.path + "/shared/link-file", withDestinationPath: "../private/secret.txt")
        try manager.createSymbolicLink(atPath: base.path + "/shared/link-dir", withDestinationPath: "../private")
        #expect(mkfifo(base.path + "/shared/pipe.jpg", 0o644) == 0)
        let provider = try LocalFileProvider(name: "page", root: base.path)
        let page = try await FolderPage.read(provider, path: "/shared", query: FolderPageQuery(), includes: ShareBrowser.isPlain)
        #expect(page.items.map(\.name) == ["sub"])
        #expect(try await ShareBrowser.reachable("/shared/sub/fine.txt", root: "/shared", provider: provider))
        #expect(try await !ShareBrowser.reachable("/shared/link-dir/secret.txt", root: "/shared", provider: provider))
        #expect(try await !ShareBrowser.reachable("/shared/link-file", root: "/shared", provider: provider))
        #expect(try await !ShareBrowser.reachable("/shared/pipe.jpg", root: "/shared", provider: provider))
        // The preview of a pipe named like a photo is refused without opening it.
        let browser = ShareBrowser(provider: provider, paths: try ServePaths(root: "/shared", basePath: "/s/T/shared"), title: "shared",
                                   zipLimit: 1 << 30, thumbnails: nil, cacheScope: "page", publicShare: true, logger: .init(label: "test"))
        let pipe = try await provider.attributesOfItem(path: "/shared/pipe.jpg")
        let answer = try await browser.thumbnail(of: pipe, size: "256", head: false)
        #expect(answer.status == .notFound)
        let odd = try await browser.thumbnail(of: pipe, size: "300", head: false)
        #expect(odd.status == .badRequest)
    }

    @Test("Download all: a folder over zip_max_bytes gets the 413 page before any byte; 0 (no limit given) offers no ZIP; under it, a ZIP")
    func zipLimit() async throws {
        let (base, provider) = try Self.folder(files: 20)  // 0 + 1 + ... + 19 = 190 bytes
        defer { base.remove() }
        let folder = try await provider.attributesOfItem(path: "/")
        func browser(_ limit: Int64?) throws -> ShareBrowser {
            ShareBrowser(provider: provider, paths: try ServePaths(root: "/", basePath: "/s/T/share"), title: "share",
                         zipLimit: limit, thumbnails: nil, cacheScope: "page", publicShare: true, logger: .init(label: "test"))
        }
        let over = try await browser(189).zip(folder, path: "/", head: false)
        #expect(over.status == .contentTooLarge)
        #expect(try await Self.text(of: over).contains("This folder is too large to download at once"))
        let off = try await browser(nil).zip(folder, path: "/", head: false)
        #expect(off.status == .notFound)
        #expect(try await Self.text(of: off).contains("Downloads of whole folders are turned off"))
        let under = try await browser(190).zip(folder, path: "/", head: false)
        #expect(under.status == .ok && under.headers[.contentType] == "application/zip")
        let page = try await browser(nil).folderPage(folder, path: "/", query: FolderPageQuery())
        #expect(!page.contains("href=\"?download=zip\""), "no Download all button when ZIPs are off")
    }

    /// The whole body of a response.
    static func text(of response: Response) async throws -> String {
        let collector = BodyCollector()
        try await response.body.write(collector)
        return String(decoding: collector.bytes, as: UTF8.self)
    }

    /// Keeps what a response body writes.
    final class BodyCollector: ResponseBodyWriter, @unchecked Sendable {
        var bytes = Data()
        func write(_ buffer: ByteBuffer) async throws { bytes.append(contentsOf: buffer.readableBytesView) }
        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    @Test("the thumbnail cache keeps the most recently used within its limit, makes a kept one never again, and keeps none over a quarter of it")
    func thumbnailCacheLimit() async throws {
        let base = try TemporaryFolder.make(prefix: "gateway-thumbnails")
        defer { base.remove() }
        let cache = ThumbnailCache(directory: URL(fileURLWithPath: base.path), limit: 4_000)
        func file(_ key: String) -> String { base.path + "/" + ThumbnailCache.fileName(key) }
        let now = Date()
        for index in 0..<4 {
            #expect(try await cache.thumbnail(for: "k\(index)") { Data(repeating: UInt8(index), count: 1_000) }?.count == 1_000)
            // Distinct times of last use, oldest first (file times can tie within a clock tick).
            try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(Double(index - 10) * 60)], ofItemAtPath: file("k\(index)"))
        }
        // k0 is used again: now the most recent.
        #expect(await cache.data(for: "k0") == Data(repeating: 0, count: 1_000))
        // A fifth takes the folder over 4,000 bytes: the least recently used go until 3,000 are left.
        _ = try await cache.thumbnail(for: "k4") { Data(repeating: 4, count: 1_000) }
        let kept = Set(try FileManager.default.contentsOfDirectory(atPath: base.path))
        #expect(kept == Set(["k0", "k3", "k4"].map(ThumbnailCache.fileName)), "\(kept)")
        let again = try await cache.thumbnail(for: "k3") {
            Issue.record("a kept thumbnail was made again")
            return nil
        }
        #expect(again == Data(repeating: 3, count: 1_000))
        // Over a quarter of the limit: given, never kept.
        #expect(try await cache.thumbnail(for: "big") { Data(repeating: 9, count: 1_001) }?.count == 1_001)
        #expect(!FileManager.default.fileExists(atPath: file("big")))
    }

    @Test("sizes, counts and download names are written for people and for RFC 6266")
    func text() {
        #expect(ShareBrowser.bytes(812) == "812 B")
        #expect(ShareBrowser.bytes(1_234_567) == "1.2 MB")
        #expect(ShareBrowser.bytes(5_368_709_120) == "5.4 GB")
        #expect(ShareBrowser.grouped(1_003) == "1,003")
        #expect(ShareBrowser.grouped(100) == "100")
        #expect(ShareBrowser.grouped(1_234_567) == "1,234,567")
        #expect(ShareBrowser.attachment("Zip \"me\" ü.zip") == "attachment; filename=\"Zip _me_ _.zip\"; filename*=UTF-8''Zip%20%22me%22%20%C3%BC.zip")
        #expect(ShareBrowser.acceptsHTML("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"))
        #expect(ShareBrowser.acceptsHTML("Text/HTML ; q=0.5"))
        #expect(!ShareBrowser.acceptsHTML("text/html;q=0"))
        #expect(!ShareBrowser.acceptsHTML("text/html;q=0.0, */*"))
        #expect(!ShareBrowser.acceptsHTML("*/*"))
        #expect(!ShareBrowser.acceptsHTML("application/xhtml+xml-not-text/html"))
        #expect(!ShareBrowser.acceptsHTML(nil))
        #expect(ServeText.readableLocalTime("2024-05-06T07:08:09") == "2024-05-06 07:08")
        #expect(ServeText.readableLocalTime("2024:05:06 07:08:09") == "2024-05-06 07:08")
        #expect(ServeText.readableLocalTime("May 2024") == "May 2024")
        #expect(ShareBrowser.duration(187) == "3:07")
        #expect(ShareBrowser.duration(3723) == "1:02:03")
    }

    @Test("a streamed ZIP passes unzip -t and gives back every byte: folders, empty files, ZIP64 entries, 70,000 entries")
    func zipStream() async throws {
        let base = try TemporaryFolder.make(prefix: "gateway-zip")
        defer { base.remove() }
        let archive = base.path + "/out.zip"
        #expect(FileManager.default.createFile(atPath: archive, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: archive))
        var zip = try ZipStream(temporaryDirectory: base.path)
        defer { zip.close() }
        func send(_ bytes: [UInt8]) throws { try handle.write(contentsOf: bytes) }
        let contents: [(String, Data, Int64?)] = [
            ("top/a.txt", Data("hello".utf8), 5),
            ("top/empty", Data(), 0),
            ("top/sub/ünïcode name.bin", Bytes.pattern(300_000, seed: 7), nil), // unknown size: a ZIP64 entry
            ("top/sub/listed wrong.bin", Bytes.pattern(70_000, seed: 9), 10),
        ]
        try send(try zip.folder("top/", modified: Date(timeIntervalSince1970: 1_700_000_000)))
        try send(try zip.folder("top/sub", modified: nil))
        for (name, data, size) in contents {
            try send(try zip.file(name, modified: Date(), expectedSize: size))
            var offset = 0
            while offset < data.count {
                let piece = data[offset..<min(data.count, offset + 65_536)]
                try zip.data(Data(piece))
                try send(Array(piece))
                offset += piece.count
            }
            try send(try zip.endFile())
        }
        for index in 0..<70_000 {
            try send(try zip.file("many/\(index)", modified: nil, expectedSize: 1))
            try zip.data(Data([UInt8(truncatingIfNeeded: index)]))
            try send([UInt8(truncatingIfNeeded: index)])
            try send(try zip.endFile())
        }
        #expect(throws: ZipStream.Failure.self) { try zip.data(Data([1])) }
        try await zip.finish { try handle.write(contentsOf: $0) }
        try handle.close()
        let size = try FileManager.default.attributesOfItem(atPath: archive)[.size] as? UInt64
        #expect(size == zip.offset)
        let test = try ChildProcess.run("/usr/bin/unzip", ["-tq", archive], environment: ProcessInfo.processInfo.environment)
        #expect(test.status == 0, "\(String(decoding: test.stdout + test.stderr, as: UTF8.self))")
        for (name, data, _) in contents {
            let out = try ChildProcess.run("/usr/bin/unzip", ["-p", archive, name], environment: ProcessInfo.processInfo.environment)
            #expect(out.status == 0 && out.stdout == data, "\(name)")
        }
        let listing = try ChildProcess.run("/usr/bin/unzip", ["-Z1", archive], environment: ProcessInfo.processInfo.environment)
        #expect(String(decoding: listing.stdout, as: UTF8.self).split(separator: "\n").count == 70_006)
        let one = try ChildProcess.run("/usr/bin/unzip", ["-p", archive, "many/69999"], environment: ProcessInfo.processInfo.environment)
        #expect(one.stdout == Data([UInt8(truncatingIfNeeded: 69_999)]))
    }

    @Test("MS-DOS times: UTC, 2-second steps, clamped to 1980 and 2107")
    func dosTimes() {
        // 2026-11-28 14:03:07 UTC.
        let (time, date) = ZipStream.dosTime(Date(timeIntervalSince1970: 1_795_874_587))
        #expect(time == UInt16(14 << 11 | 3 << 5 | 3))
        #expect(date == UInt16((2026 - 1980) << 9 | 11 << 5 | 28))
        #expect(ZipStream.dosTime(Date(timeIntervalSince1970: 0)) == (0, 33))
        #expect(ZipStream.dosTime(nil) == (0, 33))
        #expect(ZipStream.dosTime(Date(timeIntervalSince1970: .infinity)) == (0, 33))
    }
}
