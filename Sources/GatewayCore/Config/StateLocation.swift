public import Foundation

/// Where the gateway keeps its local state on disk (change-monitor snapshots and anchors; later undo
/// journals and caches): `$GATEWAY_STATE_DIR`, else the config file's `state_dir`, else
/// `$XDG_STATE_HOME/gateway`, else `~/.local/state/gateway`, else a folder under the temporary
/// directory.
public enum StateLocation {
    /// The state folder for an environment (it need not exist yet); `configured` is the config
    /// file's `state_dir` (``GatewayConfiguration/stateDirectoryURL(environment:)``).
    public static func directory(environment: [String: String] = ProcessInfo.processInfo.environment, configured: URL? = nil) -> URL {
        if let explicit = environment["GATEWAY_STATE_DIR"], explicit.hasPrefix("/") {
            return URL(fileURLWithPath: explicit, isDirectory: true)
        }
        if let configured { return configured }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("gateway", isDirectory: true)
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".local/state/gateway", isDirectory: true)
        }
        return URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true).appendingPathComponent("gateway-state-\(getuid())", isDirectory: true)
    }
}
