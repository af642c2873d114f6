import ArgumentParser

/// Options every subcommand takes. They may also be written before the subcommand
/// (`gateway --config f ls docs:`).
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Config file to use.", valueName: "file"))
    var config: String?

    @Flag(name: [.short, .long], help: "Log details (requests, decisions) to stderr.")
    var verbose = false

    @Flag(name: [.short, .long], help: "Print no progress and no summary.")
    var quiet = false

    @Flag(name: .long, help: "Show progress even when stderr is not a terminal (periodic lines).")
    var progress = false

    /// Options that take a value, for ``hoistingGlobalOptions(_:)``.
    private static let valued: Set<String> = ["--config"]
    private static let flags: Set<String> = ["-v", "--verbose", "-q", "--quiet", "--progress"]

    /// Moves global options written before the subcommand to after it, where ArgumentParser
    /// expects them. The subcommand is followed down the command tree to its leaf
    /// (`gateway --config f trash list x:` becomes `gateway trash list --config f x:`), so nested
    /// subcommands take them in either place too.
    static func hoistingGlobalOptions(_ arguments: [String], root: any ParsableCommand.Type = GatewayCommand.self) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if flags.contains(argument) {
                leading.append(argument)
                index += 1
            } else if valued.contains(argument), index + 1 < arguments.count {
                leading += [argument, arguments[index + 1]]
                index += 2
            } else if valued.contains(where: { argument.hasPrefix($0 + "=") }) {
                leading.append(argument)
                index += 1
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count else { return arguments }
        // The subcommand, then its own subcommands down to the leaf (`trash list`, `serve webdav`).
        var head: [String] = []
        var command = root
        while index < arguments.count, let next = subcommand(of: command, named: arguments[index]) {
            head.append(arguments[index])
            command = next
            index += 1
        }
        if head.isEmpty {
            // Not a subcommand (`help`, a typo): left for ArgumentParser to explain.
            head = [arguments[index]]
            index += 1
        }
        return head + leading + arguments[index...]
    }

    /// The subcommand of `command` called `name` (or one of its aliases).
    private static func subcommand(of command: any ParsableCommand.Type, named name: String) -> (any ParsableCommand.Type)? {
        command.configuration.subcommands.first { $0._commandName == name || $0.configuration.aliases.contains(name) }
    }
}
