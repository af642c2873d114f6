public import Foundation
public import GatewayCore
public import GatewayState
public import GatewayTransport
public import Logging

/// An ``FTPProvider`` that also makes public links (``FileProviderSharing``) through the gateway's
/// link server: what the registry creates when the configuration has a `links` object (FTP has no
/// sharing of its own).
public final class FTPProviderWithLinks: FTPProvider, GatewayLinkSharing, @unchecked Sendable {
    public let publicLinks: PublicLinks

    /// A provider whose links are `links`; as ``FTPProvider/init(configuration:listHidden:trash:stateDirectory:logger:)``.
    public init(links: PublicLinks, configuration: FTPClientConfiguration, listHidden: Bool = true, trash: TrashSettings = TrashSettings(),
                stateDirectory: URL = StateLocation.directory(), logger: Logger = Logger(label: "gateway.ftp")) {
        self.publicLinks = links
        super.init(configuration: configuration, listHidden: listHidden, trash: trash, stateDirectory: stateDirectory, logger: logger)
    }
}
