import Foundation

/// Where an SFTP remote is and how to reach it: the settings of a remote of type `sftp`.
public struct SFTPClientConfiguration: Sendable {
    /// How the SSH channel is made.
    public enum Channel: Sendable {
        /// In process, with swift-nio-ssh: password, Ed25519 and ECDSA keys; host keys checked here.
        case inProcess(credentials: [SSHCredential], hostKeys: HostKeyPolicy)
        /// The system's OpenSSH client: `command` (shell words, e.g. `ssh` or `ssh -F config -J jump`),
        /// given `-p`, `-l`, the key file and known_hosts file when set, then `-s HOST sftp`.
        case command(String, keyFile: String?, knownHosts: String?)
    }

    /// The remote's name in the config.
    public var remoteName: String
    public var host: String
    public var port: Int
    public var user: String
    public var channel: Channel
    /// The folder on the server that is the remote's root: absolute, or relative to the login
    /// folder; `nil` for the login folder itself.
    public var root: String?
    /// SSH sessions kept open at once (each carries many requests in flight).
    public var maxConnections: Int
    /// Time allowed to connect, exchange keys, authenticate and start SFTP.
    public var connectTimeout: Duration
    /// Time a request may wait for its reply before the connection is given up.
    public var idleTimeout: Duration
    /// Bytes per read or write request where the server does not say (OpenSSH's sftp uses 32 KiB);
    /// a server that answers `limits@openssh.com` gets its own limit, up to 255 KiB.
    public var blockSize: Int
    /// Requests in flight per transfer.
    public var requestsInFlight: Int
    /// Whether hashes may be computed on the server by running `md5sum`, `sha1sum` or `sha256sum`
    /// (the `hash_command` key: `auto`, or `none` for accounts where commands must not run).
    public var runsHashCommands: Bool = true

    public init(remoteName: String, host: String, port: Int = 22, user: String, channel: Channel, root: String? = nil,
                maxConnections: Int = 4, connectTimeout: Duration = .seconds(15), idleTimeout: Duration = .seconds(60),
                blockSize: Int = 32 << 10, requestsInFlight: Int = 64) {
        self.remoteName = remoteName
        self.host = host
        self.port = port
        self.user = user
        self.channel = channel
        self.root = root
        self.maxConnections = maxConnections
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.blockSize = blockSize
        self.requestsInFlight = requestsInFlight
    }

    /// `host` or `[host]:port`, as known_hosts and messages write it.
    public var displayHost: String { port == 22 ? host : "[\(host)]:\(port)" }
}
