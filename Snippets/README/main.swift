import Foundation
import StorageGateway

let registry = Gateway.makeRegistry()

// Either load the configuration the CLI would use (--config / $GATEWAY_CONFIG / default file) ...
let configuration = try ConfigLocator.load(flag: nil, registry: registry,
                                           environment: ProcessInfo.processInfo.environment)
let resolver = Gateway.makeResolver(configuration: configuration, registry: registry)
let docs = try await resolver.provider(named: "docs")            // any FileProviderBasic

// ... or create a provider directly.
let scratch = try LocalFileProvider(name: "scratch", root: "/tmp")
let nas = WebDAVProvider(configuration: HTTPClientConfiguration(
    baseURL: URL(string: "https://nas.example.com/dav/")!, remoteName: "nas", user: "alice", password: "..."))
let mirror = FTPProvider(configuration: FTPClientConfiguration(
    baseURL: URL(string: "ftp://ftp.example.com/pub/")!, remoteName: "mirror", user: "alice", password: "...",
    tls: .explicit))

// List a folder page by page (bounded memory, however large the folder).
for try await page in scratch.contentsOfDirectory(path: "/") {
    for item in page.entries {
        print(item.name, item.type.rawValue, item.size ?? 0)
    }
}

// Stream a file from one provider into another, atomically.
if let source = docs as? any FileProviderReadWrite {
    let stream = try await source.readStream(path: "/report.pdf")   // or offset:length: for a range
    let written = try await scratch.write(path: "/report.pdf", from: stream,
                                          options: WriteOptions(expectedSize: stream.expectedLength))
    print("wrote", written.size ?? 0, "bytes")
}

// Whole trees (or single files), between any two providers, with the copy engine.
let engine = CopyEngine(options: CopyOptions(transfers: 8, checkers: 16, retries: 5))   // also dryRun, update, ...
let from = TransferEndpoint(provider: docs, path: "/reports")
let to = TransferEndpoint(provider: scratch, path: "/reports-copy")
let summary = try await engine.run(.sync, from: from, to: to, progress: TransferProgress()) { event in
    if case .failed(_, let operation, _, let item, let error) = event {
        print(operation, item, ErrorMessage.reason(for: error))
    }
}
print(summary.copied, summary.skipped, summary.failed, summary.deleted, summary.bytes, summary.succeeded)

// The same run with its events as an AsyncStream, and a Task for the summary.
// Cancelling the task stops the run; the providers remove their temporary files.
let (events, task) = engine.start(.copy, from: from, to: to)
for await event in events {
    if case .copied(let path, let bytes) = event { print("copied", path, bytes) }
}
let result = try await task.value                                 // task.cancel() stops the run

// Compare two trees: missing, extra and different files.
let check = try await engine.check(source: from, destination: to)
print(check.missing, check.extra, check.different, check.matching, check.errors, check.isIdentical)

// Undo: removals and overwrites go to the remote's trash; each record reverts its change.
if let undoable = docs as? any FileProviderUndoable {
    let removal = try await undoable.removeItemUndoably(path: "/old-reports", recursive: true)
    try await undoable.undo(removal)                              // refuses if the item changed since
    if let trash = undoable.trash {                               // nil with "trash": false
        for try await item in trash.items() { print(item.originalPath ?? "?", item.deletionDate ?? Date()) }
    }
}

// Thumbnails and content metadata on every backend, reading only what the format needs.
if let media = docs as? any ExtendedFileProvider {
    let thumbnail = try await media.thumbnail(of: "/photo.jpg", options: ThumbnailOptions(maxDimension: 256, format: .jpeg))
    let info = try await media.metadata(of: "/song.mp3")          // nil fields: not in the file
    print(thumbnail?.width ?? 0, info.title ?? "-", info.durationSeconds ?? 0, info.entries.count)
}
