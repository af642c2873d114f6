import Foundation
public import GatewayCore
import GatewayState

extension LocalFileProvider {
    /// The `local` type for config files: `{"type": "local", "root": "/srv/files"}`.
    public static let descriptor = ProviderDescriptor(
        type: LocalFileProvider.type,
        summary: "A folder on this machine.",
        keys: [
            ConfigKey("root", .string, required: true,
                      summary: "absolute path of the folder the remote is rooted at (`~/` expands to $HOME)"),
        ] + TrashSettings.configKeys(folderSummary: "a folder below the root to use as the trash instead of the desktop's (by default the FreeDesktop trash: ~/.local/share/Trash, or .Trash-UID at the top of another file system, shared with file managers and trash-cli)"),
        validate: { remote in
            let problems = TrashSettings.problems(remote)
            guard let root = remote.string("root") else { return problems }
            if root.hasPrefix("/") || root == "~" || root.hasPrefix("~/") { return problems }
            return problems + [.init(key: "root", message: "key \"root\" must be an absolute path (or start with ~/), not \"\(root)\"")]
        },
        make: { remote, context in
            let root = expandTilde(remote.string("root") ?? "/", environment: context.environment)
            let homeTrash = LocalTrashLocator.homeTrash(environment: context.environment)
            if let links = context.links {
                return try LocalFileProviderWithLinks(
                    links: PublicLinks(configuration: links, remote: remote.name, stateDirectory: context.stateDirectory, environment: context.environment),
                    name: remote.name, root: root, stateDirectory: context.stateDirectory, trash: TrashSettings(remote), homeTrash: homeTrash,
                    logger: context.logger)
            }
            return try LocalFileProvider(name: remote.name, root: root, stateDirectory: context.stateDirectory, trash: TrashSettings(remote),
                                         homeTrash: homeTrash, logger: context.logger)
        }
    )

    static func expandTilde(_ path: String, environment: [String: String]) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + path.dropFirst()
    }
}
