import Foundation
import Logging

/// Log records kept in memory, to see which requests an operation made.
final class LogRecords: @unchecked Sendable {
    private let lock = NSLock()
    private var commands: [String] = []
    private var http: [String] = []
    private var texts: [String] = []

    func add(message: Logger.Message, metadata: Logger.Metadata?) {
        let text = message.description
        lock.withLock {
            texts.append(text)
            if text == "ftp request", case .string(let command)? = metadata?["command"] {
                commands.append(command.drop(while: { $0 == "*" }).prefix(while: { $0 != " " }).uppercased())
            }
            if text == "http request", case .string(let method)? = metadata?["method"], case .string(let path)? = metadata?["path"] {
                http.append(method + " " + path)
            }
        }
    }

    /// The verbs of the FTP requests logged since the last ``clear()``.
    var requests: [String] { lock.withLock { commands } }
    /// `METHOD path` of the HTTP requests logged since the last ``clear()``.
    var httpRequests: [String] { lock.withLock { http } }
    /// Every message logged since the last ``clear()``.
    var messages: [String] { lock.withLock { texts } }
    func clear() { lock.withLock { commands.removeAll(); http.removeAll(); texts.removeAll() } }

    /// A debug-level logger that records here.
    func logger(label: String) -> Logger {
        var logger = Logger(label: label) { _ in RecordingLogHandler(records: self) }
        logger.logLevel = .debug
        return logger
    }
}

struct RecordingLogHandler: LogHandler {
    let records: LogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        records.add(message: event.message, metadata: event.metadata)
    }
}
