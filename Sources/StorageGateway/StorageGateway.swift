@_exported public import GatewayCore
@_exported public import GatewayFTP
@_exported public import GatewayLocal
@_exported public import GatewaySFTP
@_exported public import GatewayS3
@_exported public import GatewayMedia
@_exported public import GatewayState
@_exported public import GatewayTransfer
@_exported public import GatewayTransport
@_exported public import GatewayWebDAV

/// Entry points for apps that want every built-in backend. (Named `Gateway`, not after the module, so
/// that module-qualified names such as `StorageGateway.CopyEngine` resolve.)
public enum Gateway {
    /// The built-in provider types: `local`, `webdav`, `ftp`, `sftp` and `s3`.
    public static let builtInDescriptors: [ProviderDescriptor] = [LocalFileProvider.descriptor, WebDAVProvider.descriptor, FTPProvider.descriptor,
                                                                   SFTPProvider.descriptor, S3Provider.descriptor]

    /// A new registry with the built-in provider types registered. Register your own on it with
    /// ``ProviderRegistry/register(_:replacing:)``.
    public static func makeRegistry() -> ProviderRegistry {
        let registry = ProviderRegistry()
        for descriptor in builtInDescriptors {
            try? registry.register(descriptor)
        }
        return registry
    }

    /// A resolver for `REMOTE:PATH` locations over a configuration, with bare paths on the local
    /// file system (a ``LocalFileProvider`` rooted at `/`).
    public static func makeResolver(configuration: GatewayConfiguration, registry: ProviderRegistry,
                                    context: ProviderContext = ProviderContext()) -> RemoteResolver {
        RemoteResolver(configuration: configuration, registry: registry, context: context) {
            try LocalFileProvider(name: "local", root: "/", logger: context.logger)
        }
    }
}
