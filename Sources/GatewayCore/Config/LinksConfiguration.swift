public import Foundation

/// The top-level `links` object of a config: where public links point and what signs them.
///
/// ```json
/// "links": {"base_url": "https://files.example.com", "secret_env": "GATEWAY_LINK_SECRET"}
/// ```
///
/// A link is `BASE_URL/s/TOKEN/NAME`, answered by `gateway serve links` (or any server that runs
/// the same configuration). The token signs the remote, the path and the expiry with the secret,
/// so whoever holds the secret can make links, and the server checks them without a lookup.
public struct LinksConfiguration: Sendable, Equatable {
    /// The public URL links start with: `http` or `https`, no query, no credentials, no trailing
    /// slash. Its path (if any) is where the link server answers.
    public var baseURL: URL
    /// `secret_env`: the environment variable holding the signing secret.
    public var secretEnvironmentVariable: String?
    /// `secret_command`: a shell command whose output (trimmed of newlines) is the signing secret.
    public var secretCommand: String?
    /// `zip_max_bytes`: the largest folder a share page's "Download all" makes a ZIP of, in bytes
    /// (``defaultZipLimit`` when absent); `nil` (the value 0) offers no ZIP.
    public var zipMaximumBytes: Int64?
    /// `thumbnail_cache_max_bytes`: how much the previews made for share pages may keep in the
    /// state folder (`thumbnails/`), in bytes (``defaultThumbnailCacheLimit`` when absent).
    public var thumbnailCacheMaximumBytes: Int64
    /// The config file the object came from (for messages).
    public var source: String

    /// The keys of the `links` object.
    public static let keys = ["base_url", "secret_env", "secret_command", "zip_max_bytes", "thumbnail_cache_max_bytes"]
    /// The default `zip_max_bytes`: 10 GiB.
    public static let defaultZipLimit: Int64 = 10 << 30
    /// The default `thumbnail_cache_max_bytes`: 256 MiB.
    public static let defaultThumbnailCacheLimit: Int64 = 256 << 20
    /// The shortest secret accepted, in bytes (`openssl rand -base64 32` makes a good one).
    public static let minimumSecretLength = 16

    /// Creates a configuration directly (apps that build it in code).
    public init(baseURL: URL, secretEnvironmentVariable: String? = nil, secretCommand: String? = nil,
                zipMaximumBytes: Int64? = LinksConfiguration.defaultZipLimit,
                thumbnailCacheMaximumBytes: Int64 = LinksConfiguration.defaultThumbnailCacheLimit, source: String = "(in code)") {
        self.baseURL = baseURL
        self.secretEnvironmentVariable = secretEnvironmentVariable
        self.secretCommand = secretCommand
        self.zipMaximumBytes = zipMaximumBytes
        self.thumbnailCacheMaximumBytes = thumbnailCacheMaximumBytes
        self.source = source
    }

    /// The path links live under on the server: the base URL's path, then `/s/` (`/s/` for a base
    /// URL without a path).
    public var serverPrefix: String {
        var path = baseURL.path
        while path.hasSuffix("/") { path.removeLast() }
        return path + "/s/"
    }

    /// Resolves the signing secret: the variable's value or the command's output.
    ///
    /// - Throws: ``ConfigError`` when the variable is unset, the command fails, or the secret is
    ///   shorter than ``minimumSecretLength``. Messages never contain the secret.
    public func secret(environment: [String: String]) throws -> [UInt8] {
        let value: String
        if let variable = secretEnvironmentVariable {
            guard let text = environment[variable] else {
                throw ConfigError(source: source, key: "links.secret_env",
                                  message: "links.secret_env names the environment variable \(variable), which is not set")
            }
            value = text
        } else if let command = secretCommand {
            value = try RemoteConfiguration.runSecretCommand(command, key: "secret", source: source, remote: nil, keyPrefix: "links.")
        } else {
            throw ConfigError(source: source, key: "links", message: "links needs secret_env or secret_command")
        }
        guard value.utf8.count >= Self.minimumSecretLength else {
            throw ConfigError(source: source, key: "links",
                              message: "the links secret is shorter than \(Self.minimumSecretLength) bytes (make one with: openssl rand -base64 32)")
        }
        return Array(value.utf8)
    }

    /// Validates the `links` object's values; problems are appended.
    static func validate(_ values: [String: ConfigValue], source: String, problems: inout [ConfigProblem]) -> LinksConfiguration? {
        for key in values.keys.sorted() where !keys.contains(key) {
            problems.append(ConfigProblem(source: source, key: "links.\(key)",
                                          message: "unknown key \"\(key)\" in \"links\"\(Suggestion.didYouMean(key, in: keys)) (keys: \(keys.joined(separator: ", ")))"))
        }
        func string(_ key: String) -> String? {
            guard let value = values[key] else { return nil }
            guard case .string(let text) = value else {
                problems.append(ConfigProblem(source: source, key: "links.\(key)", message: "links.\(key) must be a string, not \(value.kindDescription)"))
                return nil
            }
            return text
        }
        func bytes(_ key: String) -> Int64? {
            guard let value = values[key] else { return nil }
            guard case .integer(let number) = value, number >= 0 else {
                problems.append(ConfigProblem(source: source, key: "links.\(key)",
                                              message: "links.\(key) must be a whole number of bytes (0 or more), not \(value.kindDescription)"))
                return nil
            }
            return Int64(number)
        }
        let zipLimit = bytes("zip_max_bytes")
        let cacheLimit = bytes("thumbnail_cache_max_bytes")
        let base = string("base_url")
        let variable = string("secret_env")
        let command = string("secret_command")
        var ok = true
        var url: URL?
        if let base {
            var text = base
            while text.hasSuffix("/") { text.removeLast() }
            if let parsed = URLComponents(string: text), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
               let host = parsed.host, !host.isEmpty, parsed.user == nil, parsed.password == nil, parsed.query == nil, parsed.fragment == nil,
               let made = parsed.url {
                url = made
            } else {
                problems.append(ConfigProblem(source: source, key: "links.base_url",
                                              message: "links.base_url must be an http:// or https:// URL with a host and no credentials, query or fragment, not \"\(base)\""))
                ok = false
            }
        } else {
            problems.append(ConfigProblem(source: source, key: "links.base_url", message: "links needs \"base_url\" (the public URL links start with)"))
            ok = false
        }
        switch (variable, command) {
        case (nil, nil):
            problems.append(ConfigProblem(source: source, key: "links.secret_env", message: "links needs \"secret_env\" or \"secret_command\" (the signing secret)"))
            ok = false
        case (.some, .some):
            problems.append(ConfigProblem(source: source, key: "links.secret_command", message: "links takes one of \"secret_env\" and \"secret_command\", not both"))
            ok = false
        default:
            break
        }
        guard ok, let url else { return nil }
        return LinksConfiguration(baseURL: url, secretEnvironmentVariable: variable, secretCommand: command,
                                  zipMaximumBytes: zipLimit == 0 ? nil : zipLimit ?? defaultZipLimit,
                                  thumbnailCacheMaximumBytes: cacheLimit ?? defaultThumbnailCacheLimit, source: source)
    }
}
