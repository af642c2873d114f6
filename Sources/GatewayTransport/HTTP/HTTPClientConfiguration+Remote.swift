public import Foundation
public import GatewayCore

/// The connection keys every HTTP-based remote type shares (WebDAV, S3): their declarations for
/// config files, their checks, and the ``HTTPClientConfiguration`` they make. One place, so the
/// types cannot drift apart in names, defaults or limits.
extension HTTPClientConfiguration {
    /// `max_connections`, `connect_timeout`, `idle_timeout`, `low_speed_limit`, `low_speed_time`,
    /// `ca_file` and `insecure_tls`, with `max_connections` defaulting to `defaultConnections`.
    public static func configKeys(defaultConnections: Int) -> [ConfigKey] {
        [
            ConfigKey("max_connections", .integer, default: String(defaultConnections), summary: "most requests at once (and idle connections kept)"),
            ConfigKey("connect_timeout", .number, default: "15", summary: "seconds allowed to connect"),
            ConfigKey("idle_timeout", .number, default: "60", summary: "seconds a transfer may move no data before it fails"),
            ConfigKey("low_speed_limit", .integer, default: "1024",
                      summary: "bytes per second a transfer must average over low_speed_time, or it fails as timed out (a server dripping a body or an endless listing); 0 turns the rule off"),
            ConfigKey("low_speed_time", .number, default: "60", summary: "seconds low_speed_limit is averaged over"),
            ConfigKey("ca_file", .string, summary: "PEM file of CA certificates to trust"),
            ConfigKey("insecure_tls", .boolean, default: "false", summary: "skip TLS certificate checks (testing only; logged as a warning)"),
        ]
    }

    /// The range and duration problems of the keys in ``configKeys(defaultConnections:)``.
    public static func problems(_ remote: RemoteConfiguration) -> [ProviderDescriptor.Problem] {
        [remote.rangeProblem("max_connections", 1...64),
         remote.rangeProblem("low_speed_limit", 0...(1 << 30), unit: " bytes per second")].compactMap { $0 }
            + remote.secondsProblems(["connect_timeout", "idle_timeout", "low_speed_time"])
    }

    /// The configuration a remote's keys describe, for requests below `baseURL`.
    public init(remote: RemoteConfiguration, baseURL: URL, context: ProviderContext, defaultConnections: Int,
                user: String? = nil, password: String? = nil, bearerToken: String? = nil) {
        self.init(baseURL: baseURL, remoteName: remote.name, user: user, password: password, bearerToken: bearerToken,
                  maxConnections: context.maxConnections(remote, default: defaultConnections),
                  connectTimeout: remote.duration("connect_timeout", default: 15),
                  idleTimeout: remote.duration("idle_timeout", default: 60),
                  lowSpeedLimit: remote.integer("low_speed_limit") ?? 1024,
                  lowSpeedTime: remote.duration("low_speed_time", default: 60),
                  caFile: remote.string("ca_file"),
                  insecureTLS: remote.boolean("insecure_tls") ?? false,
                  requestAttempts: context.requestAttempts)
    }
}
