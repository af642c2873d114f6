public import Foundation
public import GatewayCore
public import GatewayState
public import Logging

/// A ``LocalFileProvider`` that also makes public links (``FileProviderSharing``) through the
/// gateway's link server: what the registry creates when the configuration has a `links` object.
public final class LocalFileProviderWithLinks: LocalFileProvider, GatewayLinkSharing, @unchecked Sendable {
    public let publicLinks: PublicLinks

    /// A provider rooted at `root` whose links are `links`; as ``LocalFileProvider/init(name:root:stateDirectory:trash:homeTrash:logger:)``.
    public init(links: PublicLinks, name: String, root: String, stateDirectory: URL = StateLocation.directory(),
                trash: TrashSettings = TrashSettings(), homeTrash: String? = nil, logger: Logger = Logger(label: "gateway.local")) throws {
        self.publicLinks = links
        try super.init(name: name, root: root, logger: logger, useOpenat2: true, stateDirectory: stateDirectory, trash: trash, homeTrash: homeTrash)
    }
}
