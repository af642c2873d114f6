import Foundation
public import GatewayCore

extension LocalFileProvider {
    /// The `local` type for config files: `{"type": "local", "root": "/srv/files"}`.
    public static let descriptor = ProviderDescriptor(
        type: LocalFileProvider.type,
        summary: "A folder on this machine.",
        keys: [
            ConfigKey("root", .string, required: true,
                      summary: "absolute path of the folder the remote is rooted at (`~/` expands to $HOME)"),
        ],
        validate: { remote in
            guard let root = remote.string("root") else { return [] }
            if root.hasPrefix("/") || root == "~" || root.hasPrefix("~/") { return [] }
            return [.init(key: "root", message: "key \"root\" must be an absolute path (or start with ~/), not \"\(root)\"")]
        },
        make: { remote, context in
            let root = expandTilde(remote.string("root") ?? "/", environment: context.environment)
            return try LocalFileProvider(name: remote.name, root: root, stateDirectory: context.stateDirectory, logger: context.logger)
        }
    )

    static func expandTilde(_ path: String, environment: [String: String]) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + path.dropFirst()
    }
}
