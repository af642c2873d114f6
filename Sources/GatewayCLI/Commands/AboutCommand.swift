import ArgumentParser
import Foundation
import StorageGateway

struct AboutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "about",
        abstract: "Show a remote's storage: total, used and free bytes.",
        discussion: HelpText.reflow("""
        --json prints {total, used, free} in bytes, null where the remote does not tell. A remote that
        reports no quota at all is an error (exit 1) with one line saying so.
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print JSON.") var json = false
    @Argument(help: "REMOTE: (or a local path).") var location: String

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "about")
        let volume = try await context.perform("about", target) {
            let volume = try await provider.storageProperties(path: target.path)
            if volume.isEmpty { throw FileProviderError.unavailable(reason: "the remote reports no storage figures", path: target.path) }
            return volume
        }
        let out = StandardOutput()
        if json {
            out.line(JSON.encode(["total": JSONField(volume.totalCapacity), "used": JSONField(volume.usedCapacity),
                                  "free": JSONField(volume.availableCapacity)]))
        } else {
            func show(_ value: Int64?) -> String { value.map { "\(Format.bytes($0)) (\($0))" } ?? "unknown" }
            out.line("Total: \(show(volume.totalCapacity))")
            out.line("Used:  \(show(volume.usedCapacity))")
            out.line("Free:  \(show(volume.availableCapacity))")
        }
        out.flush()
    }
}
