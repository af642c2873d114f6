public import Foundation

/// Path handling shared by every provider: remote paths are `/`-separated, rooted at the remote's
/// root (`/`), and never step above it.
///
/// A provider normalizes every incoming path with ``normalize(_:)`` so that `a//b/./c`, `/a/b/c/` and
/// `a/b/c` all name the same item, and `..` that would climb above the root is refused.
public enum RemotePath {
    /// Normalizes a remote path: joins repeated slashes, drops `.`, resolves `..` lexically, and returns
    /// a path that starts with `/` and has no trailing slash (the root is `/`).
    ///
    /// - Throws: ``FileProviderError/pathEscapesRoot(path:)`` when `..` climbs above the root, and
    ///   ``FileProviderError/invalidPath(path:reason:)`` for a NUL byte.
    public static func normalize(_ path: String) throws -> String {
        if isNormalized(path) { return path }
        if path.utf8.contains(0) {
            throw FileProviderError.invalidPath(path: path, reason: "contains a NUL byte")
        }
        var parts: [Substring] = []
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch component {
            case ".":
                continue
            case "..":
                guard !parts.isEmpty else { throw FileProviderError.pathEscapesRoot(path: path) }
                parts.removeLast()
            default:
                parts.append(component)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// Whether `path` is already in normal form (`/` or `/a/b`: no empty, `.` or `..` component,
    /// no trailing slash, no NUL), checked byte by byte: listings normalize every entry's path.
    static func isNormalized(_ path: String) -> Bool {
        var previous: UInt8 = 0
        var componentLength = 0
        var dots = 0
        for (index, byte) in path.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "/"):
                if index == 0 { break }
                if previous == UInt8(ascii: "/") || componentLength == dots && dots <= 2 { return false }
                componentLength = 0
                dots = 0
            case 0:
                return false
            default:
                if index == 0 { return false }
                componentLength += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
            previous = byte
        }
        if path.utf8.count == 1 { return previous == UInt8(ascii: "/") }
        return previous != UInt8(ascii: "/") && previous != 0 && !(componentLength == dots && dots <= 2)
    }

    /// The components of a normalized path (`/a/b` gives `["a", "b"]`, `/` gives `[]`).
    public static func components(of normalizedPath: String) -> [String] {
        normalizedPath.split(separator: "/").map(String.init)
    }

    /// Joins a folder path and a child name (or relative path), normalizing the result.
    public static func join(_ base: String, _ child: String) throws -> String {
        try normalize(base + "/" + child)
    }

    /// The last component (`/a/b.txt` gives `b.txt`; the root gives an empty string).
    public static func lastComponent(of path: String) -> String {
        // Byte-wise: every listed item's name is derived here.
        let bytes = path.utf8
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == UInt8(ascii: "/") { end = bytes.index(before: end) }
        var start = end
        while start > bytes.startIndex, bytes[bytes.index(before: start)] != UInt8(ascii: "/") { start = bytes.index(before: start) }
        return String(path[start..<end])
    }

    /// The parent folder (`/a/b` gives `/a`; the root is its own parent).
    public static func parent(of path: String) -> String {
        var parts = path.split(separator: "/")
        guard !parts.isEmpty else { return "/" }
        parts.removeLast()
        return "/" + parts.joined(separator: "/")
    }

    /// `path` relative to `base` when it lies under it (`/a/b/c` under `/a` gives `b/c`), else `nil`.
    public static func relative(_ path: String, to base: String) -> String? {
        if base == "/" { return String(path.dropFirst()) }
        if path == base { return "" }
        guard path.hasPrefix(base + "/") else { return nil }
        return String(path.dropFirst(base.count + 1))
    }

    /// The checks every provider makes before copying or moving `source` to `target` (both
    /// normalized), so none can lose data to a path mistake: the root is not moved, nothing goes
    /// into itself, and nothing replaces a folder it is inside (a move of `/a/b` onto `/a` with
    /// overwrite would otherwise delete `/a`, the source with it, before the move). Returns
    /// `false` where there is nothing to do (a move onto itself); throws
    /// ``FileProviderError/invalidPath(path:reason:)`` for the rest.
    public static func checkTransfer(from source: String, to target: String, moving: Bool) throws -> Bool {
        let verb = moving ? "move" : "copy"
        if moving, source == "/" { throw FileProviderError.invalidPath(path: source, reason: "cannot move the remote's root") }
        if source == target {
            if moving { return false }
            throw FileProviderError.invalidPath(path: target, reason: "cannot copy an item onto itself")
        }
        if source == "/" || target.hasPrefix(source + "/") {
            throw FileProviderError.invalidPath(path: target, reason: "cannot \(verb) a folder into itself")
        }
        if target == "/" || source.hasPrefix(target + "/") {
            throw FileProviderError.invalidPath(path: target, reason: "cannot \(verb) an item onto a folder it is in")
        }
        return true
    }

    /// The hidden name an atomic write uses beside its target until the data is complete:
    /// `.NAME.gateway-HOST-PID-RANDOM.partial`, without the original name when that would exceed
    /// 255 bytes. Every provider uses it, so leftovers from a killed process are recognisable, and
    /// a later run on this machine knows its writer is gone (``TemporaryName``).
    public static func temporaryName(for name: String) -> String {
        let suffix = ".gateway-\(TemporaryName.ownerTag)-\(String(UInt32.random(in: 0...UInt32.max), radix: 36)).partial"
        let base = name.utf8.count + suffix.utf8.count + 1 > 255 ? "" : name
        return "." + base + suffix
    }

    /// The path of a fresh temporary name (``temporaryName(for:)``) beside the item at `path`
    /// (a normalized path, not the root): where an atomic write or a copy waits to be renamed.
    public static func temporaryPath(for path: String) -> String {
        sibling(of: path, named: temporaryName(for: lastComponent(of: path)))
    }

    /// `name` in the folder holding `path` (a normalized path, not the root).
    private static func sibling(of path: String, named name: String) -> String {
        let parent = parent(of: path)
        return parent == "/" ? "/" + name : parent + "/" + name
    }

    /// The hidden name of a resumable partial file for `name` under `key` (a short identifier):
    /// `.NAME.gateway-resume-KEY.partial`. The same name and key always give the same file.
    public static func resumableName(for name: String, key: String) -> String {
        let suffix = ".gateway-resume-\(key).partial"
        let base = name.utf8.count + suffix.utf8.count + 1 > 255 ? String(ContentHasher.hash(Data(name.utf8), .sha1).prefix(16)) : name
        return "." + base + suffix
    }

    /// The resumable partial file of `path` (a normalized path, not the root) under `key`, beside
    /// it: `PARENT/.NAME.gateway-resume-KEY.partial`.
    public static func resumablePath(for path: String, key: String) -> String {
        sibling(of: path, named: resumableName(for: lastComponent(of: path), key: key))
    }

    /// The prefix shared by every resumable partial file of `name`, whatever its key.
    public static func resumablePrefix(for name: String) -> String? {
        let probe = resumableName(for: name, key: "")
        return probe.hasSuffix(".partial") ? String(probe.dropLast(".partial".count)) : nil
    }

    /// The URL of a normalized remote path below a server URL whose path is the remote's root
    /// (`ftp://host/base/` + `/a b` → `ftp://host/base/a%20b`), each component percent-encoded.
    public static func url(of path: String, below base: URL) throws -> URL {
        let remote = try normalize(path)
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        let encoded = remote.split(separator: "/").map {
            $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/;?#%"))) ?? String($0)
        }
        guard let url = URL(string: text + "/" + encoded.joined(separator: "/")) else {
            throw FileProviderError.invalidPath(path: remote, reason: "cannot be written as a URL")
        }
        return url
    }

    /// The remote path of a URL below `base` (the inverse of ``url(of:below:)``); a URL outside it
    /// throws ``FileProviderError/pathEscapesRoot(path:)``.
    public static func path(of url: URL, below base: URL) throws -> String {
        let prefix = base.absoluteString.hasSuffix("/") ? base.absoluteString : base.absoluteString + "/"
        let text = url.absoluteString
        guard text.hasPrefix(prefix) || text + "/" == prefix else { throw FileProviderError.pathEscapesRoot(path: url.path) }
        let rest = String(text.dropFirst(min(prefix.count, text.count)))
        return try normalize("/" + (rest.removingPercentEncoding ?? rest))
    }

    /// A path that is safe to show in messages: control characters are escaped so a hostile name
    /// cannot forge terminal output.
    public static func printable(_ path: String) -> String {
        var out = ""
        for scalar in path.unicodeScalars {
            if scalar.properties.generalCategory == .control {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
