import Foundation
public import GatewayCore
import GatewayState
import GatewayTransport

extension WebDAVProvider {
    /// The `webdav` type for config files.
    public static let descriptor = ProviderDescriptor(
        type: WebDAVProvider.type,
        summary: "A WebDAV server (RFC 4918): Apache mod_dav, nginx, Nextcloud, ownCloud, and others.",
        keys: [
            ConfigKey("url", .string, required: true, summary: "server URL the remote is rooted at, http:// or https:// (no credentials in it)"),
            ConfigKey("user", .string, summary: "user name for Basic or Digest authentication"),
            ConfigKey("password", .string, secret: true, summary: "password for Basic or Digest authentication"),
            ConfigKey("bearer_token", .string, secret: true, summary: "token sent as Authorization: Bearer (instead of user/password)"),
            ConfigKey("vendor", .string, default: "other", summary: "server flavour: other, nextcloud or owncloud (enables modification times)"),
            ConfigKey("ranged_uploads", .boolean, default: "true",
                      summary: "let copies of large files (--multi-thread-cutoff) upload several byte ranges at once with PUT and Content-Range, where a probe finds the server takes them (Apache mod_dav); false sends every file in one PUT"),
            ConfigKey("atomic_put", .string, default: "auto",
                      summary: "whether a small file may be written with one PUT to its name, without a temporary name and MOVE: auto (where the server's PUT is known to be atomic: Apache httpd 2.4+ with mod_dav_fs), always, never"),
            ConfigKey("sync_collection", .string, default: "auto",
                      summary: "change monitoring through RFC 6578 sync-collection reports: auto (where the server answers them and is seen to list member folders in them), always (also where that cannot be seen, e.g. a server that leaves folders out, on a tree without folders), never (list folders)"),
            ConfigKey("dead_properties", .boolean, default: "false",
                      summary: "with vendor other: besides the local state store, record each uploaded file's source stamp (source modification time, and hashes when known) on the server, in a dead property of the gateway's namespace (one PROPPATCH per upload), so that copy, sync and check on other machines compare against it too; for trees written from several machines; skipped where the server does not keep dead properties"),
        ] + HTTPClientConfiguration.configKeys(defaultConnections: 4)
          + TrashSettings.configKeys(folderSummary: "the trash folder, relative to the remote's root (`files/` and `info/` inside, FreeDesktop-style); hidden from copies and syncs. With vendor nextcloud or owncloud the server's own trash bin is used unless this is set"),
        validate: validate,
        make: { remote, context in
            let url = URL(string: remote.string("url") ?? "")!
            let configuration = HTTPClientConfiguration(
                remote: remote, baseURL: url, context: context, defaultConnections: 4, user: remote.string("user"),
                password: try remote.secret("password", environment: context.environment),
                bearerToken: try remote.secret("bearer_token", environment: context.environment))
            let vendor = Vendor(rawValue: remote.string("vendor") ?? "other") ?? .other
            let rangedUploads = remote.boolean("ranged_uploads") ?? true
            let atomicPut = AtomicPut(rawValue: remote.string("atomic_put") ?? "auto") ?? .auto
            let syncCollection = SyncCollection(rawValue: remote.string("sync_collection") ?? "auto") ?? .auto
            let deadProperties = remote.boolean("dead_properties") ?? false
            // Public links: the server's own shares where it has them (Nextcloud, ownCloud), else
            // the gateway's link server when the configuration has `links`, else none.
            if let shared = WebDAVProviderWithShares(sharing: configuration, vendor: vendor, rangedUploads: rangedUploads,
                                                     atomicPut: atomicPut, syncCollection: syncCollection, deadProperties: deadProperties,
                                                     trash: TrashSettings(remote), stateDirectory: context.stateDirectory, logger: context.logger) {
                return shared
            }
            if let links = context.links {
                return WebDAVProviderWithLinks(
                    links: PublicLinks(configuration: links, remote: remote.name, stateDirectory: context.stateDirectory, environment: context.environment),
                    configuration: configuration, vendor: vendor, rangedUploads: rangedUploads, atomicPut: atomicPut,
                    syncCollection: syncCollection, deadProperties: deadProperties, trash: TrashSettings(remote),
                    stateDirectory: context.stateDirectory, logger: context.logger)
            }
            return WebDAVProvider(configuration: configuration, vendor: vendor, rangedUploads: rangedUploads, atomicPut: atomicPut,
                                  syncCollection: syncCollection, deadProperties: deadProperties,
                                  trash: TrashSettings(remote), stateDirectory: context.stateDirectory, logger: context.logger)
        }
    )

    private static func validate(_ remote: RemoteConfiguration) -> [ProviderDescriptor.Problem] {
        var problems = TrashSettings.problems(remote)
        if let text = remote.string("url") {
            if let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil {
                if url.user != nil || url.password != nil {
                    problems.append(.init(key: "url", message: "key \"url\" must not contain credentials; use \"user\" and \"password\""))
                }
            } else {
                problems.append(.init(key: "url", message: "key \"url\" must be an http:// or https:// URL with a host"))
            }
        }
        if let mode = remote.string("sync_collection"), SyncCollection(rawValue: mode) == nil {
            let names = SyncCollection.allCases.map(\.rawValue)
            problems.append(.init(key: "sync_collection", message: "key \"sync_collection\" must be one of \(names.joined(separator: ", "))\(Suggestion.didYouMean(mode, in: names))"))
        }
        if let mode = remote.string("atomic_put"), AtomicPut(rawValue: mode) == nil {
            let names = AtomicPut.allCases.map(\.rawValue)
            problems.append(.init(key: "atomic_put", message: "key \"atomic_put\" must be one of \(names.joined(separator: ", "))\(Suggestion.didYouMean(mode, in: names))"))
        }
        if let vendor = remote.string("vendor"), Vendor(rawValue: vendor) == nil {
            let names = Vendor.allCases.map(\.rawValue)
            problems.append(.init(key: "vendor", message: "key \"vendor\" must be one of \(names.joined(separator: ", "))\(Suggestion.didYouMean(vendor, in: names))"))
        }
        problems += HTTPClientConfiguration.problems(remote)
        let hasPassword = remote.values.keys.contains { $0.hasPrefix("password") }
        let hasToken = remote.values.keys.contains { $0.hasPrefix("bearer_token") }
        if hasPassword && hasToken {
            problems.append(.init(key: "bearer_token", message: "use either user/password or bearer_token, not both"))
        }
        if hasPassword && remote.string("user") == nil {
            problems.append(.init(key: "user", message: "a password needs a \"user\""))
        }
        return problems
    }
}
