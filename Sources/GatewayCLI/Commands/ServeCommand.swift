import ArgumentParser
import Foundation
import Logging
import StorageGateway
import GatewayServe

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a remote to other programs, or public links to anyone.",
        subcommands: [ServeWebDAVCommand.self, ServeLinksCommand.self]
    )
}

/// Where a server listens, and its TLS files: the options every `serve` mode shares.
struct ServeListenOptions: ParsableArguments {
    @Option(name: .customLong("addr"), help: "HOST:PORT to listen on (port 0: any free port).") var address = "127.0.0.1:8080"
    @Option(name: .customLong("tls-cert"), help: "PEM certificate chain: serve HTTPS (HTTP/2 where the client offers it).") var tlsCert: String?
    @Option(name: .customLong("tls-key"), help: "PEM private key for --tls-cert.") var tlsKey: String?

    func validate() throws {
        guard ServeWebDAVCommand.split(address) != nil else { throw ValidationError("--addr must be HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
    }

    /// The host and port of `--addr` (checked by `validate`).
    var hostAndPort: (host: String, port: Int) { ServeWebDAVCommand.split(address)! }

    /// The URL the "serving" line shows for the bound port and `path`.
    func url(port: Int, path: String) -> String {
        let host = hostAndPort.host
        return "\(tlsCert == nil ? "http" : "https")://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)"
    }
}

struct ServeWebDAVCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webdav",
        abstract: "Serve a remote (any backend) as a WebDAV server.",
        discussion: HelpText.reflow("""
        Serves LOCATION and everything below it over HTTP/1.1 as RFC 4918 WebDAV, classes 1 and 2:
        OPTIONS, PROPFIND (Depth 0 and 1; infinity refused with 403 unless
        --allow-depth-infinity), GET and HEAD with ranges and conditional requests, PUT (streamed
        into the remote's atomic write: nothing appears under the name unless every byte came),
        DELETE, MKCOL, COPY and MOVE (server-side where the remote can), and PROPPATCH, whose dead
        properties are kept in the local state store (properties.sqlite) and follow their items,
        and LOCK and UNLOCK (exclusive and shared write locks, kept in memory; a change to a
        locked item must present the lock's token in an If header). Paths are confined to LOCATION. One access line per request goes to stderr (no
        credentials). SIGTERM or Ctrl-C stops it after the requests in flight.

        Authentication is Basic: --user with the password from the environment variable named by
        --password-env, or the users of an htpasswd file of bcrypt entries (--htpasswd FILE, made
        with `htpasswd -B`; read again when it changes). Serving without it needs --no-auth, and
        prints a warning unless the address is loopback. --tls-cert and --tls-key (PEM files)
        serve HTTPS, with HTTP/2 for clients that offer it.

        --links also answers the config's public links (what `gateway serve links` does) on the
        same listener: paths under the links' prefix (/s/, or the base URL's path and /s/) are
        links, checked by their token and open to anyone holding one; everything else is WebDAV
        behind its authentication. Use --baseurl to keep the two apart (e.g. --baseurl /dav).

        Examples:
          DAV_PASS=secret gateway serve webdav --user alice --password-env DAV_PASS photos:
          gateway serve webdav --no-auth --read-only --addr 127.0.0.1:9000 ./public
          gateway serve webdav --htpasswd /etc/gateway/users --tls-cert cert.pem --tls-key key.pem --addr 0.0.0.0:8443 nas:
        """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var listen: ServeListenOptions
    @Option(help: "The user name clients must give (Basic authentication).") var user: String?
    @Option(name: .customLong("password-env"), help: "Environment variable holding --user's password.") var passwordEnv: String?
    @Option(help: "An htpasswd file of bcrypt entries (htpasswd -B) whose users may sign in.") var htpasswd: String?
    @Flag(name: .customLong("no-auth"), help: "Serve without authentication.") var noAuth = false
    @Flag(name: .customLong("read-only"), help: "Refuse every change (403).") var readOnly = false
    @Option(help: "URL path prefix to serve under, e.g. /dav.") var baseurl = ""
    @Flag(name: .customLong("allow-depth-infinity"), help: "Answer PROPFIND with Depth: infinity (a walk of everything).") var allowDepthInfinity = false
    @Flag(help: "Also answer public links (`gateway link`, config \"links\") under their path, /s/ by default, without authentication: one listener for WebDAV and links.")
    var links = false
    @Argument(help: "REMOTE:PATH or a local path: the folder to serve.") var location: String

    func validate() throws {
        let ways = [user != nil || passwordEnv != nil, htpasswd != nil, noAuth].filter { $0 }.count
        guard ways == 1 else {
            throw ValidationError("give one of: --user with --password-env, --htpasswd FILE, or --no-auth to serve without authentication")
        }
        if user != nil || passwordEnv != nil, user == nil || passwordEnv == nil { throw ValidationError("--user and --password-env go together") }
        if !baseurl.isEmpty, !baseurl.hasPrefix("/") { throw ValidationError("--baseurl must start with /") }
    }

    /// `HOST:PORT` (`[v6]:PORT` for IPv6) as parts.
    static func split(_ address: String) -> (host: String, port: Int)? {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        return (host, port)
    }

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "serve")
        let (host, port) = listen.hostAndPort
        var credentials: (user: String, password: String)?
        if let user, let passwordEnv {
            guard let password = ProcessInfo.processInfo.environment[passwordEnv], !password.isEmpty else {
                Diagnostics.printLine("serve: the environment variable \(passwordEnv) (--password-env) is not set")
                throw ExitCode(2)
            }
            credentials = (user, password)
        }
        if noAuth, !["127.0.0.1", "::1", "localhost"].contains(host) {
            Diagnostics.printLine("warning: serving \(target.original) without authentication on \(host), reachable from other machines")
        }
        let item = try await context.perform("serve", target) { try await provider.attributesOfItem(path: target.path) }
        guard item.isDirectory else {
            Diagnostics.printLine("serve \(target.original): not a folder")
            throw ExitCode(1)
        }
        var accessLog = context.logger
        accessLog.logLevel = global.quiet ? .warning : .info
        let options = WebDAVServeOptions(host: host, port: port, basePath: baseurl, credentials: credentials,
                                         readOnly: readOnly, allowDepthInfinity: allowDepthInfinity,
                                         htpasswdFile: htpasswd, tlsCertificateFile: listen.tlsCert, tlsKeyFile: listen.tlsKey)
        let server: WebDAVServer
        var linkServer: PublicLinkServer?
        do {
            if links {
                linkServer = try PublicLinkServer(resolver: context.resolver, configuration: context.configuration,
                                                  stateDirectory: context.stateDirectory, environment: ProcessInfo.processInfo.environment,
                                                  logger: accessLog)
            }
            server = try WebDAVServer(provider: provider, root: target.path, options: options, logger: accessLog,
                                      stateDirectory: context.stateDirectory, links: linkServer)
        } catch {
            Diagnostics.printLine("serve: \(ErrorMessage.reason(for: error))")
            throw ExitCode(2)
        }
        let listen = self.listen, prefix = baseurl, linkPrefix = linkServer?.prefix
        try await server.run { bound in
            Diagnostics.printLine("serving \(target.original) at \(listen.url(port: bound, path: prefix + "/")) (Ctrl-C stops)")
            if let linkPrefix {
                Diagnostics.printLine("serving public links at \(listen.url(port: bound, path: linkPrefix)) on the same listener")
            }
        }
    }
}

struct ServeLinksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "links",
        abstract: "Answer public links made by `gateway link` (any remote of the config).",
        discussion: HelpText.reflow("""
        Serves GET and HEAD of BASE/s/TOKEN/NAME for the links `gateway link` makes with the same
        config: its top-level "links" object gives the base URL (whose path, if any, is where
        links are answered) and the signing secret (secret_env or secret_command). Put it behind
        the base URL, e.g. a reverse proxy for https://files.example.com forwarding to --addr.

        A link serves only its item: a file with ranges and conditional requests, or a folder
        and the files below it. Browsers get pages: the folder's files with sizes, dates and
        previews (?sort=name|size|date, ?order=desc, ?view=gallery, 100 rows a page), a file's
        preview and metadata, and "Download all" (?download=zip: the folder as a streamed ZIP, up
        to links.zip_max_bytes, 10 GiB by default). Previews are kept in the state folder
        (thumbnails/, up to links.thumbnail_cache_max_bytes). Remotes are reached with the config's credentials;
        clients need none. The token is checked before the remote is touched: a bad signature is
        403, an expired link 410, a revoked link (gateway link --revoke) 404 like a missing item.
        One access line per request goes to stderr, the token shortened to 8 characters.

        Example:
          GATEWAY_LINK_SECRET=... gateway serve links --addr 127.0.0.1:8081
        """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var listen: ServeListenOptions

    func run() async throws {
        let context = try CommandContext.make(global)
        let (host, port) = listen.hostAndPort
        var accessLog = context.logger
        accessLog.logLevel = global.quiet ? .warning : .info
        let server: PublicLinkServer
        do {
            server = try PublicLinkServer(resolver: context.resolver, configuration: context.configuration, stateDirectory: context.stateDirectory,
                                          environment: ProcessInfo.processInfo.environment, host: host, port: port,
                                          tlsCertificateFile: listen.tlsCert, tlsKeyFile: listen.tlsKey, logger: accessLog)
        } catch {
            throw Diagnostics.fail(operation: "serve links", item: nil, error: error)
        }
        let listen = self.listen, prefix = server.prefix
        let base = context.configuration.links?.baseURL.absoluteString ?? ""
        try await server.run { bound in
            Diagnostics.printLine("serving public links at \(listen.url(port: bound, path: prefix)) for \(base) (Ctrl-C stops)")
        }
    }
}
