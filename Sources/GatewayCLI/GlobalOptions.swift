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
    /// expects them.
    static func hoistingGlobalOptions(_ arguments: [String]) -> [String] {
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
            } else if let name = valued.first(where: { argument.hasPrefix($0 + "=") }) {
                _ = name
                leading.append(argument)
                index += 1
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count else { return arguments }
        // The subcommand, then its own subcommand if it has one (`config validate`).
        var head = [arguments[index]]
        index += 1
        if head[0] == "config", index < arguments.count, !arguments[index].hasPrefix("-") {
            head.append(arguments[index])
            index += 1
        }
        return head + leading + arguments[index...]
    }
}
