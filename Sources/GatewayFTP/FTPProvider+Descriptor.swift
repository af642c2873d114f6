import Foundation
public import GatewayCore
import GatewayState
import GatewayTransport

extension FTPProvider {
    /// Encodings the `encoding` key accepts, by name.
    static let encodings: [String: String.Encoding] = [
        "utf-8": .utf8, "utf8": .utf8,
        "latin1": .isoLatin1, "iso-8859-1": .isoLatin1,
        "latin2": .isoLatin2, "iso-8859-2": .isoLatin2,
        "windows-1250": .windowsCP1250, "windows-1251": .windowsCP1251, "windows-1252": .windowsCP1252,
        "shift_jis": .shiftJIS, "euc-jp": .japaneseEUC,
    ]

    /// The `ftp` type for config files.
    public static let descriptor = ProviderDescriptor(
        type: FTPProvider.type,
        summary: "An FTP or FTPS server (vsftpd, ProFTPD, Pure-FTPd, IIS, FileZilla Server, NAS boxes, and others).",
        keys: [
            ConfigKey("url", .string, required: true, summary: "ftp://host[:port]/base, or ftps:// for implicit TLS (no credentials in it; the path is relative to the login folder, // for an absolute one)"),
            ConfigKey("user", .string, summary: "user name (anonymous login when absent)"),
            ConfigKey("password", .string, secret: true, summary: "password"),
            ConfigKey("tls", .string, default: "none", summary: "none, explicit (AUTH TLS, required) or implicit (as an ftps:// URL)"),
            ConfigKey("passive", .boolean, default: "true", summary: "passive mode (EPSV, falling back to PASV); false for active mode"),
            ConfigKey("skip_pasv_ip", .boolean, default: "true", summary: "ignore the address in PASV replies and reuse the server's (NAT)"),
            ConfigKey("max_connections", .integer, default: "4", summary: "logged-in connections kept (and operations at once); lower it for servers that limit sessions per user"),
            ConfigKey("encoding", .string, default: "utf-8", summary: "encoding of names on the server: \(encodings.keys.sorted().joined(separator: ", "))"),
            ConfigKey("tls_max_version", .string, default: "1.2", summary: "highest TLS version offered, 1.2 or 1.3 (1.3 only for servers that do not require TLS session reuse on data connections)"),
            ConfigKey("list_hidden", .boolean, default: "true",
                      summary: "send LIST -a to servers without MLSD, so that dot files are listed (a server that refuses it gets a plain LIST); false sends LIST"),
            ConfigKey("connect_timeout", .number, default: "15", summary: "seconds allowed to connect and log in"),
            ConfigKey("idle_timeout", .number, default: "60", summary: "seconds a reply or data transfer may stall before it fails"),
            ConfigKey("low_speed_limit", .integer, default: "1024",
                      summary: "bytes per second a transfer must average over low_speed_time, or it fails as timed out (a server dripping a body or an endless listing); 0 turns the rule off"),
            ConfigKey("low_speed_time", .number, default: "60", summary: "seconds low_speed_limit is averaged over"),
            ConfigKey("ca_file", .string, summary: "PEM file of CA certificates to trust (FTPS)"),
            ConfigKey("insecure_tls", .boolean, default: "false", summary: "skip TLS certificate checks (testing only; logged as a warning)"),
        ] + TrashSettings.configKeys(folderSummary: "the trash folder, relative to the remote's root (`files/` and `info/` inside, FreeDesktop-style); hidden from copies and syncs"),
        validate: validate,
        make: { remote, context in
            let url = URL(string: remote.string("url") ?? "")!
            let configuration = FTPClientConfiguration(
                baseURL: url,
                remoteName: remote.name,
                user: remote.string("user"),
                password: try remote.secret("password", environment: context.environment),
                tls: FTPClientConfiguration.TLSMode(rawValue: remote.string("tls") ?? "none") ?? .none,
                passive: remote.boolean("passive") ?? true,
                skipPasvIP: remote.boolean("skip_pasv_ip") ?? true,
                maxConnections: context.maxConnections(remote),
                encoding: encodings[(remote.string("encoding") ?? "utf-8").lowercased()] ?? .utf8,
                tlsMaxVersion: remote.string("tls_max_version").flatMap(FTPClientConfiguration.TLSVersion.init(rawValue:)),
                connectTimeout: remote.duration("connect_timeout", default: 15),
                idleTimeout: remote.duration("idle_timeout", default: 60),
                lowSpeedLimit: remote.integer("low_speed_limit") ?? 1024,
                lowSpeedTime: remote.duration("low_speed_time", default: 60),
                caFile: remote.string("ca_file"),
                insecureTLS: remote.boolean("insecure_tls") ?? false,
                requestAttempts: context.requestAttempts
            )
            if let links = context.links {
                return FTPProviderWithLinks(
                    links: PublicLinks(configuration: links, remote: remote.name, stateDirectory: context.stateDirectory, environment: context.environment),
                    configuration: configuration, listHidden: remote.boolean("list_hidden") ?? true,
                    trash: TrashSettings(remote), stateDirectory: context.stateDirectory, logger: context.logger)
            }
            return FTPProvider(configuration: configuration, listHidden: remote.boolean("list_hidden") ?? true,
                               trash: TrashSettings(remote), stateDirectory: context.stateDirectory, logger: context.logger)
        }
    )

    private static func validate(_ remote: RemoteConfiguration) -> [ProviderDescriptor.Problem] {
        var problems = TrashSettings.problems(remote)
        if let text = remote.string("url") {
            if let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["ftp", "ftps"].contains(scheme), url.host != nil {
                if url.user != nil || url.password != nil {
                    problems.append(.init(key: "url", message: "key \"url\" must not contain credentials; use \"user\" and \"password\""))
                }
                if scheme == "ftps", case .string(let tls)? = remote.values["tls"], tls != "implicit" {
                    problems.append(.init(key: "tls", message: "an ftps:// URL means implicit TLS; key \"tls\" must be \"implicit\" or absent"))
                }
            } else {
                problems.append(.init(key: "url", message: "key \"url\" must be an ftp:// or ftps:// URL with a host"))
            }
        }
        if let tls = remote.string("tls"), FTPClientConfiguration.TLSMode(rawValue: tls) == nil {
            let names = FTPClientConfiguration.TLSMode.allCases.map(\.rawValue)
            problems.append(.init(key: "tls", message: "key \"tls\" must be one of \(names.joined(separator: ", "))\(Suggestion.didYouMean(tls, in: names))"))
        }
        if let version = remote.string("tls_max_version"), FTPClientConfiguration.TLSVersion(rawValue: version) == nil {
            problems.append(.init(key: "tls_max_version", message: "key \"tls_max_version\" must be 1.2 or 1.3"))
        }
        if let encoding = remote.string("encoding"), encodings[encoding.lowercased()] == nil {
            let names = encodings.keys.sorted()
            problems.append(.init(key: "encoding", message: "key \"encoding\" must be one of \(names.joined(separator: ", "))\(Suggestion.didYouMean(encoding, in: names))"))
        }
        problems += [remote.rangeProblem("max_connections", 1...64),
                     remote.rangeProblem("low_speed_limit", 0...(1 << 30), unit: " bytes per second")].compactMap { $0 }
        problems += remote.secondsProblems(["connect_timeout", "idle_timeout", "low_speed_time"])
        if remote.values.keys.contains(where: { $0.hasPrefix("password") }) && remote.string("user") == nil {
            problems.append(.init(key: "user", message: "a password needs a \"user\""))
        }
        return problems
    }
}
