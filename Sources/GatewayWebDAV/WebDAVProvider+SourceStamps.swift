import Foundation
import GatewayCore
import GatewayTransport

/// Source stamps (``SourceStamp``) on plain WebDAV: the source's modification time and hashes,
/// kept in a dead property of the gateway's own namespace (RFC 4918 §4.2 and §9.2, `PROPPATCH`).
///
/// The property's value is one line of `key=value` fields:
/// `v=1 mtime=1764012345.123456789 size=42 written=1764012399 sha1=…`. `size` and `written` (the
/// server's clock, seconds) say which content the stamp describes: it is valid while the file
/// still has that size and its `getlastmodified` is no later than `written`. A file changed by
/// anyone after the stamp was written has a later time, and its stamp is ignored. (A change within
/// the same second as the write, to the same size, cannot be told apart: time on WebDAV has whole
/// seconds.)
extension WebDAVProvider {
    /// The gateway's XML namespace for its dead properties.
    static let stampNamespace = "urn:x-storage-gateway:1"
    /// The property's local name.
    static let stampProperty = "source-stamp"

    /// A stamp as stored: what it says of the source, and which content it describes.
    struct StoredStamp: Equatable {
        var modificationDate: Date?
        var size: Int64
        /// The server's time (whole seconds since 1970) no earlier than the write it describes.
        var written: Int64
        var hashes: [HashAlgorithm: String] = [:]
        /// The server's ETag of the content the stamp describes, when known (local records only:
        /// a server may change a file's ETag when a property is set on it).
        var etag: String?

        /// The property's text.
        var encoded: String {
            var fields = ["v=1"]
            if let modificationDate {
                fields.append("mtime=" + String(format: "%.9f", modificationDate.timeIntervalSince1970))
            }
            fields.append("size=\(size)")
            fields.append("written=\(written)")
            for algorithm in HashAlgorithm.allCases.sorted(by: { $0.rawValue < $1.rawValue }) {
                if let hash = hashes[algorithm], Self.isHex(hash) { fields.append("\(algorithm.rawValue)=\(hash.lowercased())") }
            }
            if let etag, Self.isStorable(etag) { fields.append("etag=" + etag) }
            return fields.joined(separator: " ")
        }

        /// Reads a property's text; `nil` for anything but a well-formed version-1 stamp. Unknown
        /// fields are skipped (a later version may add some); out-of-range numbers are refused.
        init?(parsing text: String) {
            guard text.utf8.count <= 1024 else { return nil }
            var values: [Substring: Substring] = [:]
            for field in text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
                guard let equals = field.firstIndex(of: "=") else { return nil }
                values[field[..<equals]] = field[field.index(after: equals)...]
            }
            guard values["v"] == "1", let sizeText = values["size"], let size = Int64(sizeText), size >= 0,
                  let writtenText = values["written"], let written = Int64(writtenText) else { return nil }
            self.size = size
            self.written = written
            if let mtime = values["mtime"] {
                // Plain decimal seconds only: no exponent, no "nan" or "inf", within ±10,000 years.
                guard mtime.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") }),
                      let seconds = Double(mtime), seconds.isFinite, abs(seconds) < Self.timeLimit else { return nil }
                modificationDate = Date(timeIntervalSince1970: seconds)
            }
            for algorithm in HashAlgorithm.allCases {
                if let hash = values[Substring(algorithm.rawValue)], Self.isHex(hash) { hashes[algorithm] = hash.lowercased() }
            }
            if let etag = values["etag"], Self.isStorable(etag) { self.etag = String(etag) }
        }

        init(modificationDate: Date?, size: Int64, written: Int64, hashes: [HashAlgorithm: String], etag: String? = nil) {
            self.modificationDate = modificationDate
            self.size = size
            self.written = written
            self.hashes = hashes
            self.etag = etag.flatMap { Self.isStorable($0) ? $0 : nil }
        }

        /// An ETag the one-line format can hold: printable ASCII without spaces, at most 256 bytes.
        static func isStorable<S: StringProtocol>(_ etag: S) -> Bool {
            !etag.isEmpty && etag.utf8.count <= 256 && etag.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
        }

        /// Seconds from 1970 a recorded time stays within (about ±10,000 years).
        static let timeLimit = 3.2e11

        private static func isHex<S: StringProtocol>(_ text: S) -> Bool {
            !text.isEmpty && text.utf8.count <= 128 && text.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) || ($0 >= 0x61 && $0 <= 0x66)
            }
        }

        /// Whether the stamp still describes a file of this size, last written at `lastModified`,
        /// with this ETag: the same size, and the same ETag where both are known (weak or not; a server's
        /// ETag changes with every write, to the sub-second on Apache), else a time no later than
        /// `written`.
        func describes(size current: Int64?, lastModified: Date?, etag currentETag: String?) -> Bool {
            guard let current, current == size else { return false }
            if let etag, let currentETag { return VersionTag.same(etag, currentETag) }
            guard let lastModified else { return false }
            return lastModified.timeIntervalSince1970 <= Double(written)
        }

        /// What the stamp says of the source.
        var sourceStamp: SourceStamp { SourceStamp(modificationDate: modificationDate, hashes: hashes) }
    }

    /// Whether uploads also record source stamps on the server: the `dead_properties` key, and
    /// what this server was seen to do (once refused or ignored, never asked again).
    var recordsServerStamps: Bool {
        deadProperties && vendor == .other && learnedDeadProperties.withLock { $0 } != false
    }

    /// Records what was written at `remote` after a successful upload: the source's time and
    /// hashes from `options`, for the content `size` bytes long that the server answered for with
    /// `answer` (its `Date`, plus the request's duration: a server may date its answer from when
    /// the request arrived, before the body was stored) and, when known, described as `stored`
    /// (its ETag). Returns the record, or `nil` where nothing is recorded (a vendor server, which
    /// keeps times itself; no time to date it by).
    ///
    /// The record goes to the local state store (``LocalStamps``), which costs no request. With
    /// `dead_properties` it also goes to the server, in one `PROPPATCH`, where other machines see
    /// it. A failure there does not fail the write: the file is whole, and without a stamp it is
    /// compared by size and the time it was written. The first stamp on a remote is read back
    /// once: a server that answers `PROPPATCH` with success but keeps nothing (`rclone serve
    /// webdav`) or refuses it (Xandikos: 403) is not asked again.
    ///
    /// A write with nothing to record (no time, no hash) still records a stamp without them, over
    /// any earlier one: servers keep dead properties across a `PUT` to the same name (Apache does),
    /// and an earlier file's stamp must not describe the new content.
    @discardableResult
    func recordSourceStamp(at remote: String, size: Int64, options: WriteOptions, answer: HTTPResponseHead, elapsed: Duration,
                           stored: FileObject? = nil) async -> StoredStamp? {
        guard vendor == .other else { return nil }
        let slack = elapsed.components.seconds + 1
        let written: Int64
        if let dated = answer.header("date").flatMap(InternetDate.http) {
            written = Int64(saturating: dated.timeIntervalSince1970).addingReportingOverflow(slack).partialValue
        } else if let modified = stored?.modificationDate {
            written = Int64(saturating: modified.timeIntervalSince1970.rounded(.up))
        } else {
            return nil
        }
        // A time the parser would refuse (beyond ±10,000 years) is not recorded.
        let time = options.modificationDate.flatMap { abs($0.timeIntervalSince1970) < StoredStamp.timeLimit ? $0 : nil }
        var stamp = StoredStamp(modificationDate: time, size: size, written: written, hashes: options.contentHashes)
        if recordsServerStamps {
            do {
                try await writeStamp(stamp, at: remote)
            } catch {
                logger.debug("source stamp not recorded on the server", metadata: ["path": .string(remote), "error": .string("\(error)")])
            }
        }
        // The ETag of what was stored: the PUT's answer, or the description after a rename (an
        // ETag seen before a PROPPATCH could be changed by it on some servers: not recorded then).
        if !recordsServerStamps {
            stamp.etag = (answer.method == "PUT" ? answer.header("etag") : nil) ?? stored.flatMap(Self.etag(of:))
            if let etag = stamp.etag, !StoredStamp.isStorable(etag) { stamp.etag = nil }
        }
        localStamps.record(stamp, at: remote)
        return stamp
    }

    /// An item's ETag, from its version tag (`nil` where the server gave none).
    static func etag(of item: FileObject) -> String? {
        guard let tag = item.versionTag, !tag.hasPrefix("lm:") else { return nil }
        return tag
    }

    /// Sends the `PROPPATCH`, and on a remote's first stamp reads it back.
    func writeStamp(_ stamp: StoredStamp, at remote: String) async throws {
        let body = Data("""
            <?xml version="1.0" encoding="utf-8"?>
            <D:propertyupdate xmlns:D="DAV:" xmlns:G="\(Self.stampNamespace)"><D:set><D:prop>\
            <G:\(Self.stampProperty)>\(stamp.encoded)</G:\(Self.stampProperty)></D:prop></D:set></D:propertyupdate>
            """.utf8)
        let (head, response) = try await send("PROPPATCH", remote, headers: [Self.xmlContentType], body: .data(body))
        let firstStamp = learnedDeadProperties.withLock { $0 } == nil
        guard head.isSuccess else {
            // Refused as a method on the remote's first stamp: not a server for stamps. (One file's
            // refusal later, a permission on that file, does not turn stamps off for the rest.)
            if firstStamp, [403, 405, 501].contains(head.status) {
                learnDeadProperties(false, "the server refused PROPPATCH", status: head.status)
            }
            throw failure(head, body: response, path: remote)
        }
        guard firstStamp else { return }
        // A 207 can refuse the property inside (403 per property) or claim success and keep
        // nothing: read it back once. Kept means the property's text is there, valid or not (a
        // change by someone else meanwhile must not turn stamps off).
        let kept = try await describe(remote, body: Self.stampedPropfindBody, folder: false).contains { $0.sourceStamp != nil }
        learnDeadProperties(kept, kept ? "the server keeps dead properties" : "the server did not keep a dead property", status: head.status)
    }

    private func learnDeadProperties(_ kept: Bool, _ reason: String, status: Int) {
        learnedDeadProperties.withLock { $0 = kept }
        logger.debug("source stamps", metadata: ["kept": .stringConvertible(kept), "reason": .string(reason),
                                                 "status": .stringConvertible(status)])
    }

    /// The valid stamp of a parsed response: the one in its dead property, or `local`, the one this
    /// machine recorded (``LocalStamps``); the later written where both are valid.
    func sourceStamp(of resource: DAVResource, local: StoredStamp? = nil) -> SourceStamp? {
        guard !resource.isCollection else { return nil }
        let modified = resource.lastModified.flatMap(InternetDate.http)
        let valid = [resource.sourceStamp.flatMap(StoredStamp.init(parsing:)), local].compactMap { $0 }.filter {
            $0.describes(size: resource.contentLength, lastModified: modified, etag: resource.etag)
        }
        return valid.max { $0.written < $1.written }?.sourceStamp
    }
}
