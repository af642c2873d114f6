public import Foundation
public import GatewayCore
public import GatewayState
public import Logging

/// An SFTP remote whose configuration has a `links` object: it also makes public links.
public final class SFTPProviderWithLinks: SFTPProvider, GatewayLinkSharing, @unchecked Sendable {
    /// The links this remote signs and revokes.
    public let publicLinks: PublicLinks

    /// Creates the provider with its links.
    public init(links: PublicLinks, configuration: SFTPClientConfiguration, trash: TrashSettings = TrashSettings(),
                stateDirectory: URL = StateLocation.directory(), logger: Logger = Logger(label: "gateway.sftp")) {
        self.publicLinks = links
        super.init(configuration: configuration, trash: trash, stateDirectory: stateDirectory, logger: logger)
    }
}
