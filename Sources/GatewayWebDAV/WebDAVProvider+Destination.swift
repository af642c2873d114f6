import Foundation
import GatewayCore
import GatewayTransport

/// Names a server may change on the way through a `Destination` header, and the check that a
/// renamed upload stands under its name.
///
/// A `MOVE` or `COPY` names its target in the `Destination` header, which some servers decode
/// differently from a request's URL: WsgiDAV 4 cuts a `Destination` at `;` and `?` and drops a tab,
/// so an upload committed to `c;d.txt` lands as `c` while the server answers 201. Two defences:
///
/// - Before the first rename to a name with one of the characters servers are known to change
///   (``probedCharacters``), the remote is probed once: a one-byte file is moved to a name holding
///   all of them and looked up; where it does not arrive, each character is probed alone. Names
///   with a character the server changes are written with a direct `PUT` from then on (the `PUT`
///   URL keeps them), and server-side moves and copies to them are refused; said once at `-v`.
/// - After every rename of an upload, the final name is looked up: missing, or with another size,
///   the write fails with a clear error instead of reporting success.
extension WebDAVProvider {
    /// The characters probed: each one a server is known to cut or change in a `Destination`.
    /// `é` stands for every non-ASCII character.
    /// A tab stands for every control character.
    static let probedCharacters: [Character] = [";", "?", "#", "%", "+", "&", " ", "\u{E9}", "\t"]

    /// The probed characters `name` holds (any non-ASCII character counts as `é`).
    static func probedCharacters(in name: String) -> Set<Character> {
        var found: Set<Character> = []
        for character in name {
            if !character.isASCII {
                found.insert("\u{E9}")
            } else if let value = character.asciiValue, value < 0x20 || value == 0x7F {
                found.insert("\t")
            } else if probedCharacters.contains(character) {
                found.insert(character)
            }
        }
        return found
    }

    /// Whether a write of `remote` must go straight to its name with `PUT`, since this server
    /// changes such a name given in `Destination` (probed once per remote, in `remote`'s folder).
    func needsDirectPut(_ remote: String) async -> Bool {
        await destinationChanges(remote, folder: false)
    }

    /// Whether this server would change `remote`'s name given in a `Destination` for a file or,
    /// with `folder`, a folder (each probed once per remote, in `remote`'s folder).
    func destinationChanges(_ remote: String, folder: Bool) async -> Bool {
        // Nextcloud and ownCloud (SabreDAV) decode a Destination as a URL, and a probe's removal
        // there would fill the user's trash bin.
        guard vendor == .other else { return false }
        let characters = Self.probedCharacters(in: remote)  // every folder of the path is in the Destination too
        guard !characters.isEmpty,
              let changed = await destinationChangedCharacters(in: RemotePath.parent(of: remote), folder: folder) else { return false }
        return !characters.isDisjoint(with: changed)
    }

    /// The probed characters this server changes in a `Destination` name: asked once with probes
    /// in `folder`, then remembered. `nil` when the probe could not run (nothing learned; the
    /// check after each rename still guards the write).
    func destinationChangedCharacters(in folder: String, folder isFolder: Bool = false) async -> Set<Character>? {
        if let known = learnedChanges(folder: isFolder) { return known }
        // One probe at a time: concurrent uploads wait for the first one's answer.
        return await destinationProbeLock.withLock {
            if let known = learnedChanges(folder: isFolder) { return known }
            return await probeDestination(in: folder, folder: isFolder)
        }
    }

    private func probeDestination(in folder: String, folder isFolder: Bool) async -> Set<Character>? {
        var changed: Set<Character> = []
        if await destinationKeeps(String(Self.probedCharacters), in: folder, folder: isFolder) != true {
            // One by one. A character whose probe could not be written (a server that refuses
            // names with a tab) counts as changed: such names go by direct PUT, and fail plainly.
            var anyProbed = false
            for character in Self.probedCharacters {
                let kept = await destinationKeeps(String(character), in: folder, folder: isFolder)
                if kept != nil { anyProbed = true }
                if kept != true { changed.insert(character) }
            }
            guard anyProbed else { return nil }
            let names: [Character: String] = [" ": "space", "\t": "control characters", "\u{E9}": "non-ASCII characters"]
            let list = changed.map { names[$0] ?? "'\($0)'" }.sorted().joined(separator: ", ")
            logger.info(isFolder
                ? "the server changes or refuses folder names with \(list) given in a Destination header; moves of such folders are refused"
                : "the server changes or refuses names with \(list) given in a Destination header; writing such names with a direct PUT")
        }
        learnedDestinationChanges.withLock { $0[isFolder] = changed }
        return changed
    }

    /// What the probes learned for files or folders (`nil`: not yet).
    func learnedChanges(folder: Bool) -> Set<Character>? {
        learnedDestinationChanges.withLock { $0[folder] }
    }

    /// Moves a one-byte probe to a name ending in `characters` and tells whether it arrived under
    /// that name; removes it wherever it went. `nil` when the probe could not be written or moved.
    private func destinationKeeps(_ characters: String, in folder: String, folder isFolder: Bool) async -> Bool? {
        let stem = ".gateway-probe-" + String(UUID().uuidString.prefix(8)).lowercased()
        let source = folder.appendingPathComponentRemote(stem + ".partial")
        let target = folder.appendingPathComponentRemote(stem + " x" + characters + "y")
        let discard: @Sendable (String) async -> Void = { [self] path in
            if isFolder { _ = try? await send("DELETE", path, folder: true) } else { await self.discard(path) }
        }
        do {
            let (made, _) = isFolder
                ? try await send("MKCOL", source, folder: true)
                : try await send("PUT", source, headers: [(name: "Content-Type", value: "")], body: .data(Data("p".utf8)))
            guard made.isSuccess else { return nil }
            let (moved, _) = try await send("MOVE", source, folder: isFolder, headers: [
                (name: "Destination", value: paths.url(target, folder: isFolder).absoluteString), (name: "Overwrite", value: "F"),
            ])
            guard moved.isSuccess else {
                await discard(source)
                return nil
            }
            // A lookup the server refuses (lighttpd: 400 for a tab in a URL, after its MOVE made
            // the tab a "_") counts as not kept.
            let kept = ((try? await itemIfPresent(path: target)) ?? nil) != nil
            if kept {
                await discard(target)
            } else {
                // The probe landed under a changed name: find it by its unique stem.
                var pages = contentsOfDirectory(path: folder, pageSize: 1000).makeAsyncIterator()
                while let page = try? await pages.next() {
                    for item in page.entries where item.name.hasPrefix(stem) { await discard(item.path) }
                }
            }
            return kept
        } catch {
            await discard(source)
            return nil
        }
    }

    /// Looks up `remote` after an upload was renamed to it: it must be a file of `size` bytes.
    /// Returns what the server describes there.
    func verifyCommitted(_ remote: String, size: Int64) async throws -> FileObject {
        guard let stored = try await itemIfPresent(path: remote), !stored.isDirectory else {
            throw FileProviderError.malformedResponse(
                path: remote, detail: "the server confirmed the rename of the upload to \(remote), but no file stands under that name")
        }
        if let storedSize = stored.size, storedSize != size {
            throw FileProviderError.truncated(path: remote, reason: "the server holds \(storedSize) bytes under the name after writing \(size)")
        }
        return stored
    }
}
