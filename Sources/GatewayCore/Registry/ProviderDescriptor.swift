public import Foundation
public import Logging

/// What a provider gets when it is created from configuration.
public struct ProviderContext: Sendable {
    /// Where the provider logs (`--verbose` turns on debug output). Never log credentials.
    public var logger: Logger
    /// The environment used to resolve `*_env` secrets.
    public var environment: [String: String]
    /// Attempts per single network request (the CLI's `--low-level-retries`), for providers that
    /// repeat requests that broke or met a busy server.
    public var requestAttempts: Int
    /// The folder for local state (monitor snapshots, anchors); see ``StateLocation``.
    public var stateDirectory: URL
    /// The configuration's `links` object: with it, every built-in provider offers
    /// ``FileProviderSharing`` (links answered by `gateway serve links`). ``RemoteResolver`` sets
    /// it from its configuration when it is `nil`.
    public var links: LinksConfiguration?
    /// Operations the caller will run at once (the CLI's `--transfers`): a network provider whose
    /// configuration does not set `max_connections` keeps at least this many connections (at most
    /// 64), so asking for more transfers gets them. `nil`: the providers' default (4).
    public var concurrency: Int?

    /// Creates a context.
    public init(logger: Logger = Logger(label: "gateway"), environment: [String: String] = ProcessInfo.processInfo.environment,
                requestAttempts: Int = 3, stateDirectory: URL? = nil, links: LinksConfiguration? = nil, concurrency: Int? = nil) {
        self.links = links
        self.concurrency = concurrency
        self.logger = logger
        self.environment = environment
        self.requestAttempts = max(1, requestAttempts)
        self.stateDirectory = stateDirectory ?? StateLocation.directory(environment: environment)
    }
}

/// A provider type that can be named in a config file: its keys and how to build it.
///
/// Apps add their own with ``ProviderRegistry/register(_:replacing:)``.
public struct ProviderDescriptor: Sendable {
    /// A problem the type-specific validation found.
    public struct Problem: Sendable, Hashable {
        /// The key concerned.
        public var key: String?
        /// What is wrong.
        public var message: String

        /// Creates a problem.
        public init(key: String?, message: String) {
            self.key = key
            self.message = message
        }
    }

    /// The type name used in config files (`"type": "local"`).
    public var type: String
    /// One line describing the backend.
    public var summary: String
    /// The keys the type accepts (besides `type`).
    public var keys: [ConfigKey]
    /// Extra checks beyond key names and value types (e.g. a URL's scheme). Returns problems found.
    public var validate: @Sendable (RemoteConfiguration) -> [Problem]
    /// Builds a provider for a validated remote.
    public var make: @Sendable (RemoteConfiguration, ProviderContext) async throws -> any FileProviderBasic

    /// Declares a provider type.
    public init(
        type: String,
        summary: String,
        keys: [ConfigKey],
        validate: @escaping @Sendable (RemoteConfiguration) -> [Problem] = { _ in [] },
        make: @escaping @Sendable (RemoteConfiguration, ProviderContext) async throws -> any FileProviderBasic
    ) {
        self.type = type
        self.summary = summary
        self.keys = keys
        self.validate = validate
        self.make = make
    }

    /// Every key accepted in JSON: the declared keys plus `<secret>_env` and `<secret>_command`.
    public var acceptedKeys: [String: ConfigKey] {
        var accepted: [String: ConfigKey] = [:]
        for key in keys {
            accepted[key.name] = key
            if key.isSecret {
                accepted[key.name + "_env"] = ConfigKey(key.name + "_env", .string,
                                                        summary: "name of an environment variable holding \(key.name)")
                accepted[key.name + "_command"] = ConfigKey(key.name + "_command", .string,
                                                            summary: "shell command whose output is \(key.name)")
            }
        }
        return accepted
    }
}

extension ProviderContext {
    /// A network remote's connection limit: its `max_connections` when the configuration sets it,
    /// else the default (4) raised to ``concurrency`` (at most 64).
    public func maxConnections(_ remote: RemoteConfiguration, default standard: Int = 4) -> Int {
        if let configured = remote.integer("max_connections") { return configured }
        return min(64, max(standard, concurrency ?? standard))
    }
}
