import Foundation
import GatewayCore
import Testing

@Suite("Remote paths and locations")
struct PathTests {
    @Test("normalize joins slashes, drops '.', resolves '..' inside the root", arguments: [
        ("", "/"), ("/", "/"), ("a", "/a"), ("/a/b/", "/a/b"), ("a//b/./c", "/a/b/c"), ("a/b/../c", "/a/c"),
        ("./x", "/x"), ("a b/#%?", "/a b/#%?"), ("a/..", "/"),
    ])
    func normalize(input: String, expected: String) throws {
        #expect(try RemotePath.normalize(input) == expected)
    }

    @Test("normalize refuses '..' above the root and NUL bytes", arguments: ["..", "../a", "a/../../b", "/..", "a\0b"])
    func normalizeRefuses(input: String) {
        #expect(throws: FileProviderError.self) { try RemotePath.normalize(input) }
    }

    @Test("parent, last component and relative paths")
    func helpers() throws {
        #expect(RemotePath.parent(of: "/a/b") == "/a")
        #expect(RemotePath.parent(of: "/a") == "/")
        #expect(RemotePath.parent(of: "/") == "/")
        #expect(RemotePath.lastComponent(of: "/a/b.txt") == "b.txt")
        #expect(RemotePath.lastComponent(of: "/a/naïve café/") == "naïve café")
        #expect(RemotePath.lastComponent(of: "plain") == "plain")
        #expect(RemotePath.lastComponent(of: "/") == "")
        #expect(RemotePath.lastComponent(of: "") == "")
        #expect(RemotePath.lastComponent(of: "//x//") == "x")
        #expect(RemotePath.relative("/a/b/c", to: "/a") == "b/c")
        #expect(RemotePath.relative("/a", to: "/a") == "")
        #expect(RemotePath.relative("/ab", to: "/a") == nil)
        #expect(RemotePath.relative("/x/y", to: "/") == "x/y")
        #expect(try RemotePath.join("/a", "b/c") == "/a/b/c")
        #expect(RemotePath.printable("bad\u{1B}[31mname") == "bad\\u{1b}[31mname")
    }

    @Test("REMOTE:PATH and bare local paths")
    func locations() throws {
        let cwd = "/home/u"
        let remote = try RemoteLocation.parse("docs:reports/2026", currentDirectory: cwd)
        #expect(remote.remote == "docs")
        #expect(remote.path == "/reports/2026")
        let root = try RemoteLocation.parse("docs:", currentDirectory: cwd)
        #expect(root.remote == "docs" && root.path == "/")
        let into = try RemoteLocation.parse("docs:folder/", currentDirectory: cwd)
        #expect(into.hasTrailingSlash && into.path == "/folder")
        let local = try RemoteLocation.parse("./a:b", currentDirectory: cwd)
        #expect(local.remote == nil && local.path == "/home/u/a:b")
        let absolute = try RemoteLocation.parse("/tmp/x:y", currentDirectory: cwd)
        #expect(absolute.remote == nil && absolute.path == "/tmp/x:y")
        let relative = try RemoteLocation.parse("notes.txt", currentDirectory: cwd)
        #expect(relative.remote == nil && relative.path == "/home/u/notes.txt")
        let weird = try RemoteLocation.parse("-odd:x", currentDirectory: cwd)
        #expect(weird.remote == nil)
        #expect(throws: FileProviderError.self) { try RemoteLocation.parse("docs:../x", currentDirectory: cwd) }
        #expect(RemoteLocation.isValidRemoteName("my-remote_2.x"))
        #expect(!RemoteLocation.isValidRemoteName("a/b"))
        #expect(!RemoteLocation.isValidRemoteName(""))
    }

    @Test("URLs below a server's base (FTP, SFTP): each component encoded, and read back; outside the base refused",
          arguments: ["/", "/a b/c", "/#hash/100%/what?.txt", "/semi;colon&amp/naïve café", "/x:y/🚀"])
    func urlsBelowBase(path: String) throws {
        for base in ["sftp://alice@host:2222/srv/data", "ftp://host/pub/"] {
            let url = try RemotePath.url(of: path, below: URL(string: base)!)
            #expect(url.absoluteString.hasPrefix(base.hasSuffix("/") ? String(base.dropLast()) : base))
            #expect(!url.absoluteString.dropFirst(base.count).contains("?") && !url.absoluteString.dropFirst(base.count).contains("#"))
            #expect(try RemotePath.path(of: url, below: URL(string: base)!) == path)
        }
        #expect(throws: FileProviderError.self) { try RemotePath.path(of: URL(string: "sftp://alice@host:2222/srv/other/x")!, below: URL(string: "sftp://alice@host:2222/srv/data")!) }
    }
}
