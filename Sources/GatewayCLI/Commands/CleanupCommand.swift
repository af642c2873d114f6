import ArgumentParser
import Foundation
import StorageGateway

/// `gateway cleanup`: removes the temporaries that interrupted runs left behind.
struct CleanupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cleanup",
        abstract: "Remove upload temporaries that killed or crashed runs left under LOCATION.",
        discussion: HelpText.reflow("""
        An upload goes to a hidden `.NAME.gateway-HOST-PID-RANDOM.partial` beside its target and is
        renamed when complete. A run stopped by `kill -9`, a power cut or a lost network cannot remove
        it. `copy` and `sync` remove those they meet in the folders they write to; `cleanup` looks
        everywhere below LOCATION. A temporary counts as left behind when the process that wrote it
        on this machine is gone, or (written elsewhere, a resumable partial file, an older format)
        when it was last modified longer ago than --older-than (1d by default). A temporary a running
        gateway is writing on this machine is never touched.

        On S3, an interrupted upload is a multipart upload the server keeps open, out of sight of
        listings, its parts taking space: `cleanup` aborts those started longer ago than
        --older-than too. (The next write of the same file continues such an upload instead.)

        Examples:
          gateway cleanup --dry-run docs:
          gateway cleanup --older-than 2h docs:backups
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Only list what would be removed.") var dryRun = false
    @Option(help: ArgumentHelp("Also remove temporaries not known to be abandoned once older than this: 30s, 15m, 2h, 7d.",
                               valueName: "duration"))
    var olderThan: DurationArgument?
    @Flag(help: "One JSON array of {path, size, modified, removed, kind} (kind: temporary, or upload for an incomplete S3 upload).") var json = false
    @Argument(help: "REMOTE:PATH or a local path; everything below it is searched.") var location: String

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "cleanup")
        let operations = try context.capability((any FileProviderOperations).self, of: provider, operation: "cleanup", location: target)
        let age = olderThan.map { Duration.seconds($0.seconds) } ?? TemporaryName.defaultAge
        let out = StandardOutput()
        defer { out.flush() }
        var found: [FileObject] = []
        do {
            for try await item in provider.walk(path: target.path) where !item.isDirectory {
                guard let temporary = TemporaryName(item.name), temporary.isAbandoned(modified: item.modificationDate, age: age) else { continue }
                found.append(item)
            }
        } catch {
            throw Diagnostics.fail(operation: "cleanup", item: target.original, error: error)
        }
        var uploads: [IncompleteUpload] = []
        if let incomplete = provider as? any FileProviderIncompleteUploads {
            do {
                for try await upload in incomplete.incompleteUploads(below: target.path) {
                    guard let initiated = upload.initiated, Date().timeIntervalSince(initiated) > Double(age.components.seconds) else { continue }
                    uploads.append(upload)
                }
            } catch {
                throw Diagnostics.fail(operation: "cleanup", item: target.original, error: error)
            }
        }
        var removed: Int64 = 0
        var bytes: Int64 = 0
        var failures = 0
        var abortedUploads = 0
        if json { out.write("[") }
        for (index, upload) in uploads.enumerated() {
            let shown = RemoteLocation(remote: target.remote, path: upload.path).original
            var done = false
            if !dryRun, let incomplete = provider as? any FileProviderIncompleteUploads {
                do {
                    try await incomplete.abortIncompleteUpload(upload)
                    done = true
                    abortedUploads += 1
                } catch {
                    failures += 1
                    Diagnostics.printLine("cleanup \(Format.shown(shown)): \(ErrorMessage.reason(for: error))")
                }
            }
            if json {
                let value: JSONField = .object([
                    "path": .string(shown), "size": .null, "modified": JSONField(Format.iso8601(upload.initiated)),
                    "removed": .boolean(done), "kind": .string("upload"),
                ])
                out.write((index == 0 ? "" : ",") + JSON.encode(value))
            } else if dryRun || done {
                out.line("\(dryRun ? "would abort" : "aborted") incomplete upload of \(Format.shown(shown))")
            }
        }
        for (index, item) in found.enumerated() {
            let shown = RemoteLocation(remote: target.remote, path: item.path).original
            var done = false
            if !dryRun {
                do {
                    try await operations.removeItem(path: item.path, recursive: false)
                    done = true
                    removed += 1
                    bytes = bytes.saturatingAdding(item.size ?? 0)
                } catch {
                    failures += 1
                    Diagnostics.printLine("cleanup \(Format.shown(shown)): \(ErrorMessage.reason(for: error))")
                }
            }
            if json {
                let value: JSONField = .object([
                    "path": .string(shown), "size": JSONField(item.size), "modified": JSONField(Format.iso8601(item.modificationDate)),
                    "removed": .boolean(done), "kind": .string("temporary"),
                ])
                out.write((index + uploads.count == 0 ? "" : ",") + JSON.encode(value))
            } else if dryRun || done {
                let size = item.size.map { " (\(Format.bytes($0)))" } ?? ""
                out.line("\(dryRun ? "would remove" : "removed") \(Format.shown(shown))\(size)")
            }
        }
        if json { out.line("]") }
        if !global.quiet {
            let total = found.reduce(Int64(0)) { $0.saturatingAdding($1.size ?? 0) }
            Diagnostics.printLine(dryRun
                ? "cleanup: would remove \(found.count) leftover temporar\(found.count == 1 ? "y" : "ies") (\(Format.bytes(total)))"
                : "cleanup: removed \(removed) leftover temporar\(removed == 1 ? "y" : "ies") (\(Format.bytes(bytes)))")
            if !uploads.isEmpty {
                Diagnostics.printLine("cleanup: \(dryRun ? "would abort" : "aborted") \(dryRun ? uploads.count : abortedUploads) incomplete upload\(uploads.count == 1 ? "" : "s")")
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }
}
