public import Foundation

/// How an ``HTTPClient`` reaches its server.
public struct HTTPClientConfiguration: Sendable, TransferTimeoutsConfiguration {
    /// The server URL the remote is rooted at, without credentials.
    public var baseURL: URL
    /// The remote's name, for errors and logs.
    public var remoteName: String
    /// User for Basic or Digest authentication.
    public var user: String?
    /// Password for Basic or Digest authentication. Never logged or put into URLs or errors.
    public var password: String?
    /// A Bearer token sent as `Authorization: Bearer ...`. Never logged.
    public var bearerToken: String?
    /// At most this many requests at once (and idle connections kept).
    public var maxConnections: Int
    /// Connect, idle (a stalled server never hangs us) and low-speed rules.
    public var timeouts: TransferTimeouts
    /// A PEM file of CA certificates to trust instead of the system's.
    public var caFile: String?
    /// Skip TLS certificate verification (testing only; a warning is logged).
    public var insecureTLS: Bool
    /// Sent as `User-Agent`.
    public var userAgent: String
    /// Attempts per single request (`--low-level-retries`): a request that can safely be repeated
    /// is sent again when its connection breaks before an answer, or the server answers busy.
    public var requestAttempts: Int

    /// Creates a configuration.
    public init(baseURL: URL, remoteName: String, user: String? = nil, password: String? = nil, bearerToken: String? = nil,
                maxConnections: Int = 4, connectTimeout: Duration = .seconds(15), idleTimeout: Duration = .seconds(60),
                lowSpeedLimit: Int = 1024, lowSpeedTime: Duration = .seconds(60), caFile: String? = nil, insecureTLS: Bool = false, userAgent: String = "swift-storage-gateway/0.1",
                requestAttempts: Int = 3) {
        self.baseURL = baseURL
        self.remoteName = remoteName
        self.user = user
        self.password = password
        self.bearerToken = bearerToken
        self.maxConnections = maxConnections
        self.timeouts = TransferTimeouts(connect: connectTimeout, idle: idleTimeout, lowSpeedLimit: lowSpeedLimit, lowSpeedTime: lowSpeedTime)
        self.caFile = caFile
        self.insecureTLS = insecureTLS
        self.userAgent = userAgent
        self.requestAttempts = max(1, requestAttempts)
    }
}
