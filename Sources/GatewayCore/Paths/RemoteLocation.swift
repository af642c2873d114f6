/// A `REMOTE:PATH` argument, or a bare local path, as users write them on the command line.
///
/// - `docs:reports/2026` is `reports/2026` on the remote `docs` (the remote's root is `docs:`).
/// - `/tmp/x`, `./a:b`, `notes.txt` are local paths (a `/` before the first `:` makes it local).
public struct RemoteLocation: Sendable, Hashable, CustomStringConvertible {
    /// The remote's name; `nil` for a local path.
    public var remote: String?
    /// The normalized path: inside the remote, or an absolute local path.
    public var path: String
    /// Whether the argument ended with `/` (for `copy`, "into this folder").
    public var hasTrailingSlash: Bool
    /// The argument as written, for messages.
    public var original: String

    /// Creates a location directly.
    public init(remote: String?, path: String, hasTrailingSlash: Bool = false, original: String? = nil) {
        self.remote = remote
        self.path = path
        self.hasTrailingSlash = hasTrailingSlash
        self.original = original ?? (remote.map { "\($0):\(path)" } ?? path)
    }

    /// Parses an argument.
    ///
    /// - Parameters:
    ///   - argument: `REMOTE:PATH`, or a local path.
    ///   - currentDirectory: resolves relative local paths.
    /// - Throws: ``FileProviderError`` for a path that climbs above its root or holds a NUL byte.
    public static func parse(_ argument: String, currentDirectory: String) throws -> RemoteLocation {
        let trailing = argument.hasSuffix("/") && argument.count > 1
        if let colon = argument.firstIndex(of: ":") {
            let name = String(argument[..<colon])
            if isValidRemoteName(name) {
                let path = try RemotePath.normalize(String(argument[argument.index(after: colon)...]))
                return RemoteLocation(remote: name, path: path, hasTrailingSlash: trailing, original: argument)
            }
        }
        let absolute = argument.hasPrefix("/") ? argument : currentDirectory + "/" + argument
        return RemoteLocation(remote: nil, path: try RemotePath.normalize(absolute), hasTrailingSlash: trailing, original: argument)
    }

    /// Remote names: letters, digits, `_`, `-`, `.`; starting with a letter or digit.
    public static func isValidRemoteName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIIAlphanumeric else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIIAlphanumeric || $0 == "_" || $0 == "-" || $0 == "." }
    }

    /// The same location one level down.
    public func appending(_ relativePath: String) throws -> RemoteLocation {
        let joined = try RemotePath.join(path, relativePath)
        let shown = original.hasSuffix("/") || original.hasSuffix(":") ? original + relativePath : original + "/" + relativePath
        return RemoteLocation(remote: remote, path: joined, original: shown)
    }

    /// `remote:path` (or the local path).
    public var description: String { original }
}

extension Unicode.Scalar {
    fileprivate var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
    }
}
