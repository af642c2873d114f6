import ArgumentParser
import StorageGateway

struct StatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stat",
        abstract: "Show one item's attributes.",
        discussion: """
        --json prints {name, path, type, size, modified, created, content_type, version, hidden,
        read_only, extra}; unknown values are null.
        """
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print JSON.") var json = false
    @Argument(help: "REMOTE:PATH or a local path.") var location: String

    struct Output: Encodable {
        var name: String
        var path: String
        var type: String
        var size: Int64?
        var modified: String?
        var created: String?
        var content_type: String?
        var version: String?
        var hidden: Bool
        var read_only: Bool
        var extra: [String: String]

        enum CodingKeys: String, CodingKey {
            case name, path, type, size, modified, created, content_type, version, hidden, read_only, extra
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(path, forKey: .path)
            try container.encode(type, forKey: .type)
            try container.encode(size, forKey: .size)
            try container.encode(modified, forKey: .modified)
            try container.encode(created, forKey: .created)
            try container.encode(content_type, forKey: .content_type)
            try container.encode(version, forKey: .version)
            try container.encode(hidden, forKey: .hidden)
            try container.encode(read_only, forKey: .read_only)
            try container.encode(extra, forKey: .extra)
        }
    }

    func run() async throws {
        let context = try CommandContext.make(global)
        let target = try context.location(location)
        let provider = try await context.provider(for: target, operation: "stat")
        let item = try await context.perform("stat", target) { try await provider.attributesOfItem(path: target.path) }
        let output = Output(name: item.name, path: item.path, type: item.type.rawValue, size: item.isDirectory ? nil : item.size,
                            modified: Format.iso8601(item.modificationDate), created: Format.iso8601(item.creationDate),
                            content_type: item.contentType, version: item.versionTag, hidden: item.isHidden,
                            read_only: item.isReadOnly, extra: item.extraProperties)
        let out = StandardOutput()
        if json {
            out.line(JSON.encode(output))
        } else {
            out.line("name:         \(output.name)")
            out.line("path:         \(output.path)")
            out.line("type:         \(output.type)")
            out.line("size:         \(output.size.map { "\($0) (\(Format.bytes($0)))" } ?? "-")")
            out.line("modified:     \(output.modified ?? "-")")
            out.line("created:      \(output.created ?? "-")")
            out.line("content type: \(output.content_type ?? "-")")
            out.line("version:      \(output.version ?? "-")")
            out.line("hidden:       \(output.hidden)")
            out.line("read only:    \(output.read_only)")
            for (key, value) in output.extra.sorted(by: { $0.key < $1.key }) { out.line("\(key): \(value)") }
        }
        out.flush()
    }
}
