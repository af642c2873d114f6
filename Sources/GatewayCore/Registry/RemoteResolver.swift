/// Turns remote names into providers, creating each at most once and sharing it afterwards.
public actor RemoteResolver {
    /// The configuration in use.
    public let configuration: GatewayConfiguration
    private let registry: ProviderRegistry
    private let context: ProviderContext
    private let makeLocalFileSystem: @Sendable () throws -> any FileProviderBasic
    private var providers: [String: any FileProviderBasic] = [:]
    private var localFileSystem: (any FileProviderBasic)?

    /// Creates a resolver.
    ///
    /// - Parameters:
    ///   - configuration: the named remotes.
    ///   - registry: the provider types remotes may use.
    ///   - context: what each provider gets when it is created (logger, environment, state folder).
    ///   - localFileSystem: builds the provider for bare local paths (the built-in default),
    ///     rooted at `/`.
    public init(configuration: GatewayConfiguration, registry: ProviderRegistry, context: ProviderContext,
                localFileSystem: @escaping @Sendable () throws -> any FileProviderBasic) {
        self.configuration = configuration
        self.registry = registry
        self.context = context
        self.makeLocalFileSystem = localFileSystem
    }

    /// The provider for a location: its named remote, or the local file system for a bare path.
    public func provider(for location: RemoteLocation) async throws -> any FileProviderBasic {
        if let remote = location.remote { return try await provider(named: remote) }
        if let localFileSystem { return localFileSystem }
        let made = try makeLocalFileSystem()
        localFileSystem = made
        return made
    }

    /// The provider for a configured remote.
    ///
    /// - Throws: ``ConfigError`` for an unknown remote (with a suggestion) or one whose secret cannot
    ///   be resolved; the provider's own error when it cannot be created.
    public func provider(named name: String) async throws -> any FileProviderBasic {
        if let existing = providers[name] { return existing }
        guard let remote = configuration.remotes[name] else {
            let known = configuration.remoteNames
            let list = known.isEmpty ? "no remotes are configured" : "configured: \(known.joined(separator: ", "))"
            throw ConfigError(source: configuration.source ?? "(no config file found)", remote: name,
                              message: "unknown remote\(Suggestion.didYouMean(name, in: known)) (\(list); write ./\(name):... for a local path with a colon)")
        }
        guard let descriptor = registry.descriptor(forType: remote.type) else {
            throw ConfigError(source: remote.source, remote: name, key: "type", message: "unknown type \"\(remote.type)\"")
        }
        var remoteContext = context
        remoteContext.logger[metadataKey: "remote"] = .string(name)
        if remoteContext.links == nil { remoteContext.links = configuration.links }
        let provider = try await descriptor.make(remote, remoteContext)
        providers[name] = provider
        return provider
    }

    /// The provider for a configured remote, as the capability an app needs:
    /// `try await resolver.provider(named: "docs", as: (any FileProviderReadWrite).self)`.
    ///
    /// - Throws: as ``provider(named:)``, and ``FileProviderError/unsupported(operation:path:)``
    ///   naming the capability when the remote's provider does not have it.
    public func provider<Capability>(named name: String, as capability: Capability.Type) async throws -> Capability {
        let provider = try await provider(named: name)
        guard let capable = provider as? Capability else {
            throw FileProviderError.unsupported(operation: "\(capability) (remote \"\(name)\")", path: "/")
        }
        return capable
    }
}
