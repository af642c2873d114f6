public import Foundation

/// Finds the config file: `--config FILE`, else `$GATEWAY_CONFIG`, else
/// `$XDG_CONFIG_HOME/gateway/config.json`, else `~/.config/gateway/config.json`.
public enum ConfigLocator {
    /// Where the configuration comes from.
    public enum Location: Sendable, Hashable {
        /// A file named explicitly (flag or `GATEWAY_CONFIG`): it must exist.
        case explicit(URL)
        /// The default location, which exists.
        case defaultFile(URL)
        /// No file: the built-in default (bare paths are local) plus any environment-defined remotes.
        case none
    }

    /// Decides where the configuration comes from.
    public static func locate(flag: String?, environment: [String: String], fileExists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> Location {
        if let flag, !flag.isEmpty { return .explicit(URL(fileURLWithPath: flag)) }
        if let variable = environment["GATEWAY_CONFIG"], !variable.isEmpty { return .explicit(URL(fileURLWithPath: variable)) }
        let base: String
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            base = xdg
        } else if let home = environment["HOME"], !home.isEmpty {
            base = home + "/.config"
        } else {
            return .none
        }
        let candidate = base + "/gateway/config.json"
        return fileExists(candidate) ? .defaultFile(URL(fileURLWithPath: candidate)) : .none
    }

    /// Locates and loads the configuration.
    ///
    /// - Throws: ``ConfigError`` for a missing explicit file or an invalid configuration.
    public static func load(flag: String?, registry: ProviderRegistry, environment: [String: String]) throws -> GatewayConfiguration {
        switch locate(flag: flag, environment: environment) {
        case .explicit(let url):
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw ConfigError(source: url.path, message: "file not found")
            }
            return try GatewayConfiguration.load(from: url, registry: registry, environment: environment)
        case .defaultFile(let url):
            return try GatewayConfiguration.load(from: url, registry: registry, environment: environment)
        case .none:
            var configuration = try GatewayConfiguration.parse(data: Data("{}".utf8), source: "environment",
                                                               registry: registry, environment: environment)
            configuration.source = nil
            return configuration
        }
    }
}
