public import Foundation

/// How an ``FTPClient`` reaches its server.
public struct FTPClientConfiguration: Sendable, TransferTimeoutsConfiguration {
    /// How the connection is protected.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Plain FTP (credentials and data in clear text).
        case none
        /// Explicit FTPS: connect in clear, then `AUTH TLS`; login and data are encrypted (required).
        case explicit
        /// Implicit FTPS: TLS from the first byte (usually port 990); the `ftps://` URL scheme.
        case implicit
    }

    /// The highest TLS version to offer, for servers that break with newer ones.
    public enum TLSVersion: String, Sendable, CaseIterable {
        case tls1_2 = "1.2"
        case tls1_3 = "1.3"
    }

    /// `ftp://host[:port]/base` (or `ftps://` for implicit TLS), without credentials. The path is
    /// relative to the login folder, as in RFC 1738; start it with `//` (or `%2F`) for an absolute one.
    public var baseURL: URL
    /// The remote's name, for errors and logs.
    public var remoteName: String
    /// User name; anonymous login when `nil`.
    public var user: String?
    /// Password. Never logged or put into URLs or errors.
    public var password: String?
    /// TLS mode; an `ftps://` URL always means ``TLSMode/implicit``.
    public var tls: TLSMode
    /// Passive mode (EPSV, falling back to PASV); `false` uses active mode (PORT/EPRT).
    public var passive: Bool
    /// Ignore the address in a PASV reply and connect to the control connection's host instead
    /// (servers behind NAT often announce an unreachable private address).
    public var skipPasvIP: Bool
    /// Logged-in control connections kept per remote (and the most operations at once).
    public var maxConnections: Int
    /// How names are encoded on the server (UTF-8 unless a legacy server needs another).
    public var encoding: String.Encoding
    /// Cap on the TLS version offered; `nil` means TLS 1.2. (With TLS 1.3, libcurl resumes FTP data
    /// connections with already-used session tickets, which servers that require TLS session reuse
    /// refuse on every other transfer; choose 1.3 only for servers that do not require reuse.)
    public var tlsMaxVersion: TLSVersion?
    /// Connect, idle (a control reply or data transfer that stalls) and low-speed rules.
    public var timeouts: TransferTimeouts
    /// A PEM file of CA certificates to trust instead of the system's.
    public var caFile: String?
    /// Skip TLS certificate verification (testing only; a warning is logged).
    public var insecureTLS: Bool
    /// Attempts per single operation that can safely be repeated (`--low-level-retries`).
    public var requestAttempts: Int

    /// Creates a configuration.
    public init(baseURL: URL, remoteName: String, user: String? = nil, password: String? = nil, tls: TLSMode = .none,
                passive: Bool = true, skipPasvIP: Bool = true, maxConnections: Int = 4, encoding: String.Encoding = .utf8,
                tlsMaxVersion: TLSVersion? = nil, connectTimeout: Duration = .seconds(15), idleTimeout: Duration = .seconds(60),
                lowSpeedLimit: Int = 1024, lowSpeedTime: Duration = .seconds(60),
                caFile: String? = nil, insecureTLS: Bool = false, requestAttempts: Int = 3) {
        self.baseURL = baseURL
        self.remoteName = remoteName
        self.user = user
        self.password = password
        self.tls = baseURL.scheme?.lowercased() == "ftps" ? .implicit : tls
        self.passive = passive
        self.skipPasvIP = skipPasvIP
        self.maxConnections = max(1, maxConnections)
        self.encoding = encoding
        self.tlsMaxVersion = tlsMaxVersion
        self.timeouts = TransferTimeouts(connect: connectTimeout, idle: idleTimeout, lowSpeedLimit: lowSpeedLimit, lowSpeedTime: lowSpeedTime)
        self.caFile = caFile
        self.insecureTLS = insecureTLS
        self.requestAttempts = max(1, requestAttempts)
    }
}
