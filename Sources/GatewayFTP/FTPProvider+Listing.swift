import Foundation
public import GatewayCore
import GatewayTransport

extension FTPProvider {
    public func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing {
        let folder: String
        do {
            folder = try RemotePath.normalize(path)
        } catch {
            return DirectoryListing(path: path, failure: error)
        }
        let pageSize = max(1, pageSize)
        return DirectoryListing(path: folder, pageSize: pageSize) { [self] in
            var body: ByteStream.AsyncIterator?
            var lines = LineSplitter(encoding: client.configuration.encoding)
            var machine = false
            var finished = false
            var unparseable: [FTPListParseError] = []
            let now = Date()
            return { [self] in
                if finished {
                    // Everything parseable was delivered; the lines that were not are reported, never dropped quietly.
                    throw FileProviderError.malformedResponse(path: folder, detail: Self.describe(unparseable, folder: folder))
                }
                if body == nil {
                    machine = try await features().machineListings
                    let hidden = !machine && listHidden && !hiddenListingRefused.load(ordering: .relaxed)
                    let command = machine ? "MLSD" : hidden ? "LIST -a" : "LIST"
                    let directory = try await serverPath(folder)
                    do {
                        body = try await client.list(directory: directory, command: command, path: folder).makeAsyncIterator()
                    } catch let error as FileProviderFTPError where hidden && (500..<600).contains(error.replyCode) {
                        // `LIST -a` refused (an option the server does not know, or a "file -a"
                        // it cannot find): a plain LIST, remembered once it works.
                        do {
                            body = try await client.list(directory: directory, command: "LIST", path: folder).makeAsyncIterator()
                        } catch {
                            throw await refine(error, path: folder, expecting: .directory)
                        }
                        hiddenListingRefused.store(true, ordering: .relaxed)
                        logger.debug("LIST -a refused; listing with LIST", metadata: ["path": .string(folder), "reply": .stringConvertible(error.replyCode)])
                    } catch {
                        throw await refine(error, path: folder, expecting: .directory)
                    }
                }
                var entries: [FileObject] = []
                let tooLong = FileProviderError.malformedResponse(
                    path: folder, detail: "the server's listing has a line longer than \(LineSplitter.maximumLineLength / 1024) KiB")
                while entries.count < pageSize {
                    var line: String?
                    do { line = try lines.next() } catch { throw tooLong }
                    if line == nil {
                        if let chunk = try await body!.next() {
                            do { try lines.append(chunk) } catch { throw tooLong }
                            continue
                        }
                        line = lines.finish()
                        if line == nil {
                            guard unparseable.isEmpty else {
                                finished = true
                                return ListingPage(entries: entries, isLast: false)
                            }
                            return ListingPage(entries: entries, isLast: true)
                        }
                    }
                    do {
                        let entry = machine ? try MLSDParser.parse(line!) : try LISTParser.parse(line!, now: now)
                        if let entry, let item = fileObject(entry, in: folder, exactTimes: machine) {
                            entries.append(item)
                        } else if let entry, entry.name != ".", entry.name != ".." {
                            // An empty name or one with "/" is no member of this folder: a line that
                            // cannot be understood, not one to drop without a word.
                            throw FTPListParseError(line: line!, reason: "a name that cannot be a member of the folder")
                        }
                    } catch {
                        logger.warning("unparseable listing line", metadata: ["path": .string(folder), "line": .string(String(line!.prefix(200)))])
                        if unparseable.count < 3 { unparseable.append(error as? FTPListParseError ?? FTPListParseError(line: line!, reason: "\(error)")) }
                    }
                }
                return ListingPage(entries: entries, isLast: false)
            }
        }
    }

    static func describe(_ errors: [FTPListParseError], folder: String) -> String {
        let examples = errors.map { "\"\($0.line)\"" }.joined(separator: ", ")
        return "the server's listing of \(folder) has lines that could not be understood: \(examples)"
    }

    /// The ``FileObject`` of a listing entry (`nil` for names that cannot be items: empty, `.`, `..`, or with `/`).
    func fileObject(_ entry: FTPListEntry, in folder: String, exactTimes: Bool) -> FileObject? {
        guard !entry.name.isEmpty, entry.name != ".", entry.name != "..", !entry.name.utf8.contains(UInt8(ascii: "/")) else { return nil }
        return fileObject(entry, path: folder.appendingRemoteComponent(entry.name), exactTimes: exactTimes)
    }

    /// The ``FileObject`` of a listing or MLST entry at `path`.
    func fileObject(_ entry: FTPListEntry, path: String, exactTimes: Bool) -> FileObject {
        var extra: [String: String] = [:]
        if let target = entry.symlinkTarget { extra["symlink_target"] = target }
        if let permissions = entry.permissions { extra["permissions"] = permissions }
        if let unique = entry.unique { extra["unique"] = unique }
        // Version tags only where the time is exact (MLSD/MLST); LIST times are rounded to minutes.
        let version = exactTimes && entry.type == .file ? Self.versionTag(size: entry.size, date: entry.modificationDate) : nil
        return FileObject(path: path, type: entry.type, size: entry.type == .directory ? nil : entry.size,
                          modificationDate: entry.modificationDate, isReadOnly: entry.isReadOnly, versionTag: version,
                          extraProperties: extra)
    }

    /// A version tag from size and modification time, the only version FTP knows.
    static func versionTag(size: Int64?, date: Date?) -> String? {
        guard let size, let date else { return nil }
        return "\(size)@\(String(format: "%.3f", date.timeIntervalSince1970))"
    }

    public func attributesOfItem(path: String) async throws -> FileObject {
        let remote = try RemotePath.normalize(path)
        let target = try await serverPath(remote)
        if remote == "/" {
            guard try await client.isDirectory(target, path: remote) else { throw CocoaError.posix(ENOENT, path: remote, remote: name) }
            return FileObject(path: "/", type: .directory)
        }
        if try await features().machineListings {
            return try await machineStat(remote, target: target)
        }
        // No MLST: SIZE and MDTM describe files; a folder is one the server lets us enter.
        do {
            let info = try await client.fileInfo(target, path: remote)
            return FileObject(path: remote, type: .file, size: info.size, modificationDate: info.modificationDate,
                              versionTag: Self.versionTag(size: info.size, date: info.modificationDate))
        } catch let error as FileProviderFTPError where error.replyCode >= 500 {
            if try await client.isDirectory(target, path: remote) { return FileObject(path: remote, type: .directory) }
            throw FileProviderFTPError(replyCode: error.replyCode, command: error.command, path: remote, serverText: error.serverText, kind: .notFound)
        }
    }

    /// Stat through MLST (RFC 3659 §7): one line of facts on the control connection.
    private func machineStat(_ remote: String, target: String) async throws -> FileObject {
        // Sent as "*MLST": a refusal ("no such file", the common answer when probing a name about
        // to be written) is read here, and libcurl keeps the connection instead of closing it.
        let replies = try await client.execute(["*MLST \(target)"], directory: RemotePath.parent(of: target), path: remote)
        // The MLST reply is the multi-line 250 (a CWD after it answers 250 too, in one line). Without
        // one, MLST was refused: libcurl's own commands all succeeded, so the refusal is the last
        // reply of 400 or more (an `OPTS UTF8 ON` before it is the only other command that may fail).
        guard let reply = replies.last(where: { $0.code == 250 && $0.lines.count > 1 }) else {
            if let refusal = replies.last(where: { $0.code >= 400 }) {
                let missing = refusal.code == 550 || refusal.code == 501
                throw FileProviderFTPError(replyCode: refusal.code, command: "MLST", path: remote, serverText: refusal.text,
                                           kind: missing ? .notFound : nil)
            }
            throw FileProviderError.malformedResponse(path: remote, detail: "the server's MLST answer has no facts")
        }
        guard let facts = reply.innerLines.first(where: { $0.contains("=") }) else {
            throw FileProviderError.malformedResponse(path: remote, detail: "the server's MLST answer has no facts")
        }
        var line = String(facts.drop(while: { $0 == " " }))
        if line.hasPrefix("250-") { line = String(line.dropFirst(4)).trimmingCharacters(in: .whitespaces) }
        // A folder describes itself as "cdir" in MLST; the parser skips those in listings.
        let lowered = line.lowercased()
        let isSelf = lowered.contains("type=cdir") || lowered.contains("type=pdir")
        if isSelf {
            line = line.replacingOccurrences(of: "type=cdir", with: "type=dir", options: .caseInsensitive)
                .replacingOccurrences(of: "type=pdir", with: "type=dir", options: .caseInsensitive)
        }
        let entry: FTPListEntry?
        do {
            entry = try MLSDParser.parse(line)
        } catch {
            throw FileProviderError.malformedResponse(path: remote, detail: "\(error)")
        }
        guard let entry else { return FileObject(path: remote, type: .directory) }
        return fileObject(entry, path: remote, exactTimes: true)
    }

    public func storageProperties(path: String) async throws -> VolumeObject {
        let remote = try RemotePath.normalize(path)
        throw FileProviderError.unavailable(reason: "FTP servers do not report quota or free space (remote \"\(name)\")", path: remote)
    }
}

/// Splits a listing into lines (LF or CRLF), decoded in the server's encoding: GatewayCore's
/// ``LineBuffer``, bounded at ``maximumLineLength``.
struct LineSplitter {
    /// The longest listing line accepted: real ones are a few hundred bytes (a 4 KiB name is long).
    static let maximumLineLength = 64 * 1024

    /// A line longer than ``maximumLineLength``.
    typealias LineTooLong = LineBuffer.LineTooLong

    let encoding: String.Encoding
    private var lines = LineBuffer(maximumLength: Self.maximumLineLength, dropsCarriageReturn: true)

    init(encoding: String.Encoding) { self.encoding = encoding }

    /// Adds the next chunk; throws when the line in progress passes ``maximumLineLength``.
    mutating func append(_ data: Data) throws(LineTooLong) { try lines.append(data) }

    /// The next complete line, without its line ending.
    mutating func next() throws(LineTooLong) -> String? { try lines.next().map(decode) }

    /// What is left after the last line ending (a last line without one), or `nil`.
    mutating func finish() -> String? {
        guard let rest = lines.finish(), !rest.isEmpty else { return nil }
        return decode(rest)
    }

    private func decode(_ bytes: ArraySlice<UInt8>) -> String {
        if encoding == .utf8 { return String(decoding: bytes, as: UTF8.self) }
        return String(data: Data(bytes), encoding: encoding) ?? String(decoding: bytes, as: UTF8.self)
    }
}
