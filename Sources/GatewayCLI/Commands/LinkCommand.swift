import ArgumentParser
import Foundation
import StorageGateway

struct LinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "link",
        abstract: "Make (or revoke) a public link to a file or folder.",
        discussion: HelpText.reflow("""
        Prints a URL through which anyone can read LOCATION without the remote's credentials, as
        the last line of its output. Opened in a browser, a folder's link is a page with the
        folder's name, its files with sizes, dates and previews (sorted and paged, or as a
        gallery), and a "Download all" ZIP; a file's link shows its preview, its metadata and a
        download button. Nothing above the shared item can be reached.

        For a remote with vendor nextcloud or owncloud, the link is the server's own public link
        share (its OCS Share API; read-only). For every other remote the config needs a top-level
        "links" object: {"base_url": "https://files.example.com", "secret_env": "VAR"} (or
        "secret_command"). The link is then BASE_URL/s/TOKEN/NAME, where the token signs the
        remote, the path and the expiry with the secret (HMAC-SHA256), and `gateway serve links`,
        run with the same config, answers it: expired links get 410, bad signatures 403, revoked
        links 404.

        --expire DURATION (30s, 15m, 2h, 7d) makes the link stop working after that long
        (Nextcloud keeps expiry dates by the day). --revoke ends every link to LOCATION made so
        far: kept in the local state store (links.sqlite) for the link server, or the shares
        deleted on Nextcloud and ownCloud.

        Examples:
          gateway link --expire 7d docs:reports/2026.pdf
          gateway link --revoke docs:reports/2026.pdf
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "How long the link works: a number with s, m, h or d (30s, 15m, 2h, 7d).") var expire: DurationArgument?
    @Flag(help: "Revoke every link to LOCATION instead of making one.") var revoke = false
    @Flag(name: .long, help: "Print JSON: {location, url, expires} (or {location, revoked}).") var json = false
    @Argument(help: "REMOTE:PATH: the file or folder to share.") var location: String

    func validate() throws {
        if revoke, expire != nil { throw ValidationError("--revoke takes no --expire") }
        if let expire, expire.seconds == 0 { throw ValidationError("--expire must be longer than 0s") }
    }

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "link")
        guard let sharing = provider as? any FileProviderSharing else {
            let remote = target.remote.map { "remote \"\($0)\"" } ?? "a local path"
            Diagnostics.printLine("link \(Format.shown(target.original)): \(remote) cannot make public links: add a \"links\" object "
                                  + "(base_url and secret_env) to the config and run `gateway serve links`, or use a Nextcloud or ownCloud remote"
                                  + (target.remote == nil ? " (links need a named remote)" : ""))
            throw ExitCode(2)
        }
        let out = StandardOutput()
        if revoke {
            try await context.perform("link --revoke", target) { try await sharing.revokePublicLinks(to: target.path) }
            if json {
                let fields: [String: JSONField] = ["location": .string(target.original), "revoked": .boolean(true)]
                out.line(JSON.encode(fields))
            } else {
                out.line("revoked every link to \(Format.shown(target.original))")
            }
            out.flush()
            return
        }
        let lifetime = expire.map { Duration.seconds($0.seconds) }
        let url = try await context.perform("link", target) { try await sharing.publicLink(to: target.path, expiresAfter: lifetime) }
        let expires = expire.map { Date().addingTimeInterval(TimeInterval($0.seconds)) }
        if json {
            let fields: [String: JSONField] = ["location": .string(target.original), "url": .string(url.absoluteString),
                                               "expires": JSONField(Format.iso8601(expires))]
            out.line(JSON.encode(fields))
        } else {
            if let expires { out.line("expires \(Format.iso8601(expires) ?? "-")") }
            out.line(url.absoluteString)
        }
        out.flush()
    }
}
