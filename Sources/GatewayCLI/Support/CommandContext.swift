import ArgumentParser
import Foundation
import Logging
import StorageGateway
#if canImport(Glibc)
import Glibc
#endif

/// Everything a command needs: the registry, the configuration, providers by location, and the
/// single place where errors become `gateway: <op> <remote:path>: <reason>` lines and exit codes.
struct CommandContext: Sendable {
    let global: GlobalOptions
    let registry: ProviderRegistry
    let configuration: GatewayConfiguration
    let resolver: RemoteResolver
    let logger: Logger
    /// The local state store's folder (undo journal, monitor snapshots).
    let stateDirectory: URL

    /// Loads the configuration; a config problem is reported and exits with 2.
    /// `concurrency`: operations run at once (`--transfers`), which network remotes without their
    /// own `max_connections` get as connections.
    static func make(_ global: GlobalOptions, requestAttempts: Int = 3, concurrency: Int? = nil) throws -> CommandContext {
        Logging.bootstrapOnce()
        var logger = Logger(label: "gateway")
        logger.logLevel = global.verbose ? .debug : .warning
        let registry = Gateway.makeRegistry()
        let environment = ProcessInfo.processInfo.environment
        let configuration: GatewayConfiguration
        do {
            configuration = try ConfigLocator.load(flag: global.config, registry: registry, environment: environment)
        } catch {
            throw Diagnostics.fail(operation: "config", item: nil, error: error)
        }
        logger.debug("configuration loaded", metadata: ["source": .string(configuration.source ?? "built-in default"),
                                                        "remotes": .string(configuration.remoteNames.joined(separator: ","))])
        let stateDirectory = StateLocation.directory(environment: environment, configured: configuration.stateDirectoryURL(environment: environment))
        let resolver = Gateway.makeResolver(configuration: configuration, registry: registry,
                                                   context: ProviderContext(logger: logger, environment: environment,
                                                                            requestAttempts: requestAttempts,
                                                                            stateDirectory: stateDirectory, concurrency: concurrency))
        return CommandContext(global: global, registry: registry, configuration: configuration, resolver: resolver, logger: logger,
                              stateDirectory: stateDirectory)
    }

    /// Loads the configuration and opens the provider for one `REMOTE:PATH` argument: the start of
    /// every single-location command.
    static func open(_ global: GlobalOptions, _ argument: String, for operation: String) async throws
        -> (context: CommandContext, location: RemoteLocation, provider: any FileProviderBasic) {
        let context = try make(global)
        let location = try context.location(argument)
        return (context, location, try await context.provider(for: location, operation: operation))
    }

    /// Parses a `REMOTE:PATH` argument; a bad one is a usage error (exit 2).
    func location(_ argument: String) throws -> RemoteLocation {
        do {
            return try RemoteLocation.parse(argument, currentDirectory: FileManager.default.currentDirectoryPath)
        } catch {
            Diagnostics.printLine("\(argument): \(ErrorMessage.reason(for: error))")
            throw ExitCode(2)
        }
    }

    /// The provider for a location (unknown remotes are config errors, exit 2).
    func provider(for location: RemoteLocation, operation: String) async throws -> any FileProviderBasic {
        do {
            return try await resolver.provider(for: location)
        } catch {
            throw Diagnostics.fail(operation: operation, item: location.original, error: error)
        }
    }

    /// The provider as a capability, or a clear "not supported" failure.
    func capability<Capability>(_ type: Capability.Type, of provider: any FileProviderBasic, operation: String,
                                location: RemoteLocation) throws -> Capability {
        guard let capable = provider as? Capability else {
            throw Diagnostics.fail(operation: operation, item: location.original,
                                   error: FileProviderError.unsupported(operation: operation, path: location.path))
        }
        return capable
    }

    /// Runs `body`, turning any error into the one-line report and the right exit code.
    func perform<T>(_ operation: String, _ location: RemoteLocation, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw Diagnostics.fail(operation: operation, item: location.original, error: error)
        }
    }

    /// Whether to draw progress: forced by --progress, on by default for a terminal, off with --quiet.
    var showsProgress: Bool { !global.quiet && (global.progress || isatty(STDERR_FILENO) == 1) }
}

extension ExitCode {
    /// A plan that changed since it was made, or is not a plan: make a new one (don't retry).
    static let planInvalid: Int32 = 3
}

/// Error lines and exit codes.
enum Diagnostics {
    /// Writes `gateway: <text>` to stderr, made ``safe(_:)`` first.
    static func printLine(_ text: String) {
        FileHandle.standardError.write(Data("gateway: \(safe(text))\n".utf8))
    }

    /// A message line as it may reach a terminal or a log: the remotes' secrets masked (a server
    /// may echo them) and control characters escaped (names and server text are data).
    static func safe(_ text: String) -> String {
        TerminalText.escaped(SecretRedaction.redact(text))
    }

    /// Reports an error and returns the exit code to throw: 2 for configuration problems, 130 for
    /// cancellation, 1 for everything else. Already-reported exits pass through.
    static func fail(operation: String, item: String?, error: any Error) -> ExitCode {
        if let exit = error as? ExitCode { return exit }
        if let config = error as? ConfigError {
            for problem in config.problems { printLine(problem.description) }
            return ExitCode(2)
        }
        if error.failureKind == .cancelled { return ExitCode(130) }
        let prefix = item.map { "\(operation) \($0)" } ?? operation
        if let plan = error as? PlanFormatError {
            // A plan that changed or does not read: rerunning the same shard cannot help.
            printLine("\(prefix): \(plan.description)")
            return ExitCode(ExitCode.planInvalid)
        }
        printLine("\(prefix): \(ErrorMessage.reason(for: error))")
        return ExitCode(1)
    }
}

enum Logging {
    /// Sends swift-log output to stderr; the level is set per logger (`--verbose` gives debug).
    /// Runs once per process.
    static func bootstrapOnce() {
        _ = bootstrapped
    }

    private static let bootstrapped: Bool = {
        LoggingSystem.bootstrap { label in SafeLogHandler(StreamLogHandler.standardError(label: label)) }
        return true
    }()
}

/// A log handler that passes each message and metadata value through ``Diagnostics/safe(_:)``
/// before the wrapped handler writes it: log lines quote names and server text too.
struct SafeLogHandler: LogHandler {
    private var wrapped: any LogHandler

    init(_ wrapped: any LogHandler) { self.wrapped = wrapped }

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(Diagnostics.safe(event.message.description))"
        event.metadata = event.metadata.map(Self.safe)
        wrapped.log(event: event)
    }

    private static func safe(_ metadata: Logger.Metadata) -> Logger.Metadata {
        metadata.mapValues(safe)
    }

    private static func safe(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(Diagnostics.safe(text))
        case .stringConvertible(let convertible): .string(Diagnostics.safe(convertible.description))
        case .array(let values): .array(values.map(safe))
        case .dictionary(let values): .dictionary(values.mapValues(safe))
        }
    }
}
