import ArgumentParser
import StorageGateway

struct RemotesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remotes",
        abstract: "List the configured remotes.",
        discussion: "With --json: an array of {name, type, source}."
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws {
        let context = try CommandContext.make(global)
        let out = StandardOutput()
        let remotes = context.configuration.remoteNames.compactMap { context.configuration.remotes[$0] }
        if json {
            struct Entry: Encodable { var name: String; var type: String; var source: String }
            out.line(JSON.encode(remotes.map { Entry(name: $0.name, type: $0.type, source: $0.source) }))
        } else {
            for remote in remotes { out.line("\(remote.name):\t\(remote.type)") }
        }
        out.flush()
    }
}
