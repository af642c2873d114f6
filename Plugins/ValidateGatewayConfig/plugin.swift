import Foundation
import PackagePlugin

/// `swift package validate-config [FILE ...]`: validates gateway config files with the very
/// validator the CLI uses (`gateway config validate`). Without arguments it checks
/// `config.example.json` at the package root. Fails when any file has a problem.
@main
struct ValidateGatewayConfig: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "gateway")
        let root = context.package.directoryURL
        let files = arguments.isEmpty ? [root.appending(path: "config.example.json").path()] : arguments
        var failed: [String] = []
        for file in files {
            let process = Process()
            process.executableURL = tool.url
            process.arguments = ["config", "validate", file]
            // Environment overrides must not change what a file-only check says.
            process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GATEWAY_REMOTE_") }
            try process.run()
            process.waitUntilExit()
            if process.terminationStatus != 0 { failed.append(file) }
        }
        if !failed.isEmpty {
            Diagnostics.error("invalid gateway config: \(failed.joined(separator: ", "))")
            throw ValidationFailure(files: failed)
        }
    }

    struct ValidationFailure: Error, CustomStringConvertible {
        var files: [String]
        var description: String { "invalid gateway config: \(files.joined(separator: ", "))" }
    }
}
