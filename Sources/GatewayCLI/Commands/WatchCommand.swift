import ArgumentParser
import Foundation
import StorageGateway

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print changes under a folder as they are seen.",
        discussion: HelpText.reflow("""
        One line per change, paths relative to LOCATION:
          created PATH | modified PATH | removed PATH | renamed OLD -> NEW
        Local folders report changes at once (inotify); WebDAV and FTP remotes are compared with a
        snapshot every --interval seconds (one listing per folder). A removed or renamed folder is
        one line; what was inside went with it.

        --state FILE keeps your place: on start, everything that changed since the anchor saved
        in FILE is printed first (catch-up after being offline), then watching goes on; FILE is
        updated after each batch. Without an existing FILE, the current state is recorded and
        nothing is printed for it. --once stops after the catch-up, for scripts and cron jobs:
          gateway watch --once --state inbox.anchor dav:inbox

        Snapshots live in $GATEWAY_STATE_DIR, else $XDG_STATE_HOME/gateway, else
        ~/.local/state/gateway. An anchor that can no longer be served (state removed, history
        pruned) resets FILE and exits 1: run again to start over.

        --json prints JSON lines: {"kind", "path", "previous_path", "type", "size", "modified"}.
        A remote that stops answering is retried with back-off and reported once per outage.
        Exit codes: 0 (--once done), 1 failure or expired anchor, 2 usage, 130 interrupted.
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: [.customShort("R"), .long], help: "Watch the whole tree under LOCATION, not only its members.") var recursive = false
    @Option(name: .long, help: "Seconds between two comparisons on polling backends (WebDAV, FTP).") var interval: Double = 10
    @Flag(name: .long, help: "Print JSON lines.") var json = false
    @Option(name: .long, help: "Keep the anchor in FILE: catch up from it on start, update it after each batch.") var state: String?
    @Flag(name: .long, help: "Catch up from --state, then exit.") var once = false
    @Argument(help: "REMOTE:PATH of a folder, or a local folder.") var location: String

    func validate() throws {
        guard interval.isFinite, interval >= 0.1, interval <= 86_400 else {
            throw ValidationError("--interval must be between 0.1 and 86400 seconds")
        }
        if once && state == nil { throw ValidationError("--once needs --state FILE (it catches up from the anchor saved there)") }
    }

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "watch")
        let monitor = try context.capability((any FileProviderMonitor).self, of: provider, operation: "watch", location: target)
        let printer = ChangePrinter(base: target.path, json: json)
        let stateFile = state.map { StateFile(path: $0, location: location, recursive: recursive) }
        let options = MonitorOptions(recursive: recursive, interval: .seconds(saturating: interval))

        var anchor: SyncAnchor
        var catchingUp: Bool
        if let saved = try stateFile?.load() {
            anchor = saved
            catchingUp = true
        } else {
            anchor = try await context.perform("watch", target) { try await monitor.currentAnchor(at: target.path, recursive: recursive) }
            try stateFile?.save(anchor)
            if once { return }
            catchingUp = false
        }
        // From here on every change is reported (the stream first catches up from the anchor).
        context.logger.info("watching \(location)")

        var outage: Outage?
        while true {
            do {
                for try await page in monitor.changePages(since: anchor, options: options) {
                    if let ended = outage {
                        Diagnostics.printLine("watch \(location): reachable again after \(Format.duration(ContinuousClock.now - ended.started))")
                        outage = nil
                    }
                    printer.print(page.events)
                    anchor = page.anchor
                    try stateFile?.save(anchor)
                    if catchingUp && !page.moreComing {
                        catchingUp = false
                        if once { return }
                    }
                }
                return
            } catch {
                if case .anchorExpired? = error as? FileProviderError {
                    stateFile?.reset()
                    Diagnostics.printLine("watch \(location): anchor expired; run again to start over")
                    throw ExitCode(1)
                }
                // Retried: what a remote that stops answering gives (time-outs, refused or cut
                // connections, busy servers). Not retried: the local state store held by another
                // process, and answers that won't change.
                var isStateStore = false
                if case .stateStoreUnavailable? = error as? FileProviderError { isStateStore = true }
                guard error.isTransient, !isStateStore, !once, error.failureKind != .cancelled else {
                    throw Diagnostics.fail(operation: "watch", item: location, error: error)
                }
                if outage == nil {
                    Diagnostics.printLine("watch \(location): \(ErrorMessage.reason(for: error)); retrying")
                    outage = Outage(started: .now)
                }
                let wait = outage!.nextWait()
                context.logger.debug("watch: retrying", metadata: ["after": .string("\(wait)")])
                do { try await Task.sleep(for: wait) } catch { throw ExitCode(130) }
            }
        }
    }

    /// An ongoing failure to reach the remote: reported once, retried with growing waits.
    struct Outage {
        let started: ContinuousClock.Instant
        var attempts = 0

        mutating func nextWait() -> Duration {
            attempts += 1
            return .seconds(min(60, 1 << min(attempts - 1, 6)))
        }
    }
}

/// Prints change events as text lines or JSON lines, paths relative to the watched folder.
struct ChangePrinter {
    let base: String
    let json: Bool

    func relative(_ path: String) -> String {
        RemotePath.relative(path, to: base) ?? path
    }

    func print(_ events: [FileChangeEvent]) {
        guard !events.isEmpty else { return }
        let out = StandardOutput()
        for event in events {
            let path = relative(event.path)
            if json {
                out.line(JSON.encode([
                    "kind": .string(event.kind.rawValue), "path": .string(path),
                    "previous_path": JSONField(event.previousPath.map(relative)),
                    "type": JSONField(event.item?.type.rawValue), "size": JSONField(event.item?.isDirectory == true ? nil : event.item?.size),
                    "modified": JSONField(Format.iso8601(event.item?.modificationDate)),
                ] as [String: JSONField]))
            } else if let previous = event.previousPath {
                out.line("\(event.kind.rawValue) \(Format.shown(relative(previous))) -> \(Format.shown(path))")
            } else {
                out.line("\(event.kind.rawValue) \(Format.shown(path))")
            }
        }
        out.flush()
    }
}

/// The `--state` file: the anchor as JSON, with the location it belongs to, replaced atomically.
struct StateFile {
    let path: String
    let location: String
    let recursive: Bool

    struct Contents: Codable {
        var location: String
        var recursive: Bool
        var anchor: SyncAnchor
        var saved: String?
    }

    /// The saved anchor, or `nil` when the file does not exist. A file of another location or
    /// recursion, or one that cannot be read, is a usage error.
    func load() throws -> SyncAnchor? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20,
              let contents = try? JSONDecoder().decode(Contents.self, from: data) else {
            Diagnostics.printLine("watch: --state \(path): not a gateway watch state file; remove it to start over")
            throw ExitCode(2)
        }
        guard contents.location == location, contents.recursive == recursive else {
            Diagnostics.printLine("watch: --state \(path) belongs to `\(contents.recursive ? "-R " : "")\(contents.location)`; use another file for this location")
            throw ExitCode(2)
        }
        return contents.anchor
    }

    func save(_ anchor: SyncAnchor) throws {
        let contents = Contents(location: location, recursive: recursive, anchor: anchor, saved: Format.iso8601(Date()))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            try encoder.encode(contents).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw Diagnostics.fail(operation: "watch", item: nil, error: CocoaError(.fileWriteUnknown, userInfo: [
                NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "cannot save --state \(path): \(ErrorMessage.reason(for: error))",
            ]))
        }
    }

    /// Removes the file, so the next run starts over.
    func reset() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
