import ArgumentParser
import StorageGateway

struct StatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stat",
        abstract: "Show one item's attributes.",
        discussion: HelpText.reflow("""
        --json prints {name, path, type, size, modified, created, content_type, version, hidden,
        read_only, extra, hashes}; unknown values are null. `hashes` holds the content hashes the
        remote reported with the item (Nextcloud's stored SHA-1/MD5), by algorithm.

        On plain WebDAV, a file the gateway uploaded also shows what it recorded of its source (a
        source stamp, kept in the local state store, and with `dead_properties` in a dead property
        on the server), while the file is unchanged since: `source_modified`
        (the source's modification time, which copy, sync and check compare against) and
        `source_hashes`.
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print JSON.") var json = false
    @Argument(help: "REMOTE:PATH or a local path.") var location: String

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "stat")
        let item = try await context.perform("stat", target) { try await provider.attributesOfItem(path: target.path) }
        var fields = item.listingJSON(path: item.path)
        fields["created"] = JSONField(Format.iso8601(item.creationDate))
        fields["content_type"] = JSONField(item.contentType)
        fields["version"] = JSONField(item.versionTag)
        fields["hidden"] = .boolean(item.isHidden)
        fields["read_only"] = .boolean(item.isReadOnly)
        fields["extra"] = .object(item.extraProperties.mapValues(JSONField.string))
        fields["hashes"] = .object(Dictionary(uniqueKeysWithValues: item.hashes.map { ($0.key.rawValue, JSONField.string($0.value)) }))
        if let stamp = item.sourceStamp {
            fields["source_modified"] = JSONField(Format.iso8601(stamp.modificationDate))
            fields["source_hashes"] = .object(Dictionary(uniqueKeysWithValues: stamp.hashes.map { ($0.key.rawValue, JSONField.string($0.value)) }))
        }
        let out = StandardOutput()
        if json {
            out.line(JSON.encode(fields))
        } else {
            let size = item.isDirectory ? nil : item.size
            out.line("name:         \(Format.shown(item.name))")
            out.line("path:         \(Format.shown(item.path))")
            out.line("type:         \(item.type.rawValue)")
            out.line("size:         \(size.map { "\($0) (\(Format.bytes($0)))" } ?? "-")")
            out.line("modified:     \(Format.iso8601(item.modificationDate) ?? "-")")
            out.line("created:      \(Format.iso8601(item.creationDate) ?? "-")")
            out.line("content type: \(Format.shown(item.contentType ?? "-"))")
            out.line("version:      \(Format.shown(item.versionTag ?? "-"))")
            out.line("hidden:       \(item.isHidden)")
            out.line("read only:    \(item.isReadOnly)")
            for (key, value) in item.extraProperties.sorted(by: { $0.key < $1.key }) { out.line("\(key): \(Format.shown(value))") }
            for (algorithm, digest) in item.hashes.sorted(by: { $0.key < $1.key }) { out.line("\(algorithm.rawValue): \(digest)") }
            if let stamp = item.sourceStamp {
                out.line("source modified: \(Format.iso8601(stamp.modificationDate) ?? "-")")
                for (algorithm, digest) in stamp.hashes.sorted(by: { $0.key < $1.key }) { out.line("source \(algorithm.rawValue): \(digest)") }
            }
        }
        out.flush()
    }
}
