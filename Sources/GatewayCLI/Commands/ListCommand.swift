import ArgumentParser
import StorageGateway

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List a folder (or describe a single file).",
        discussion: HelpText.reflow("""
        Plain output is one name per line, folders ending in '/'. -l adds size and modification time
        (UTC). -R lists everything below, as paths relative to the listed folder. --json writes an array
        of {name, path, type, size, modified} as the listing streams (size null for folders, modified in
        ISO 8601).

        Examples:
          gateway ls docs:
          gateway ls -lR docs:reports
          gateway ls --json /tmp | jq '.[].name'
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: [.customShort("R"), .long], help: "Recurse into subfolders.") var recursive = false
    @Flag(name: [.customShort("l"), .customLong("long")], help: "Long format: size, modification time, name.") var long = false
    @Flag(name: .long, help: "Print JSON, streamed.") var json = false
    @Argument(help: "REMOTE:PATH or a local path.") var location: String

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "ls")
        let out = StandardOutput()
        var first = true
        let (json, long) = (self.json, self.long)  // read once: property wrappers cost per entry
        func emit(_ item: FileObject, relative: String) {
            if json {
                out.write((first ? "[\n" : ",\n") + JSON.encode(item.listingJSON(path: relative)))
            } else if long {
                let size = item.isDirectory ? "-" : String(item.size ?? 0)
                let name = Format.shown(relative) + (item.isDirectory ? "/" : "")
                out.line("\(String(repeating: " ", count: max(0, 12 - size.count)))\(size) \(Format.listingDate(item.modificationDate)) \(name)")
            } else {
                out.line(Format.shown(relative) + (item.isDirectory ? "/" : ""))
            }
            first = false
        }
        // On failure the JSON array is left unclosed (and the exit code is 1), so a cut-off listing
        // can never be read as a complete one.
        defer { out.flush() }
        /// Ends the listing (closes the JSON array) once everything was printed.
        func finish() { if json { out.line(first ? "[]" : "\n]") } }
        try await context.perform("ls", target) {
            if !recursive {
                // The listing first: for a folder (the usual case) that is the only request, and a
                // provider's listing of a file fails with "not a directory" (a behaviour-suite rule).
                do {
                    for try await page in provider.contentsOfDirectory(path: target.path) {
                        for item in page.entries { emit(item, relative: item.name) }
                        out.flush()
                    }
                } catch where error.failureKind == .notADirectory && first {
                    let item = try await provider.attributesOfItem(path: target.path)
                    emit(item, relative: item.name)
                }
                return finish()
            }
            let root = try await provider.attributesOfItem(path: target.path)
            var isFolder = root.isDirectory
            if root.isSymbolicLink {
                // A link to a folder is listed like the folder (the provider checks where it points).
                var probe = provider.contentsOfDirectory(path: target.path, pageSize: 1).makeAsyncIterator()
                isFolder = (try? await probe.next()) != nil
            }
            guard isFolder else {
                emit(root, relative: root.name)
                return finish()
            }
            for try await item in provider.walk(path: target.path) {
                emit(item, relative: RemotePath.relative(item.path, to: target.path) ?? item.path)
            }
            finish()
        }
    }
}
