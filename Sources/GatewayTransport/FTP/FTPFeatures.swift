import Foundation

/// What an FTP server says it supports, from its `FEAT` reply (RFC 2389).
public struct FTPFeatures: Sendable, Hashable {
    /// Upper-cased feature names (`MLST`, `MFMT`, `UTF8`, `SIZE`, `REST`, ...).
    public var names: Set<String>
    /// The facts `MLST` offers (lower-cased, `*` removed), e.g. `type`, `size`, `modify`.
    public var mlstFacts: Set<String>
    /// The `SITE` commands announced as features (upper-cased), e.g. `COPY` for ProFTPD's mod_copy
    /// (`SITE CPFR`/`SITE CPTO`).
    public var siteCommands: Set<String>
    /// The algorithms the `HASH` command offers (upper-cased, `*` removed), e.g. `SHA-1`, `SHA-256`.
    public var hashNames: Set<String>

    /// No features: a server that does not answer FEAT.
    public static let none = FTPFeatures(names: [], mlstFacts: [])

    /// Creates a feature set.
    public init(names: Set<String>, mlstFacts: Set<String>, siteCommands: Set<String> = [], hashNames: Set<String> = []) {
        self.names = names
        self.mlstFacts = mlstFacts
        self.siteCommands = siteCommands
        self.hashNames = hashNames
    }

    /// Reads a FEAT reply (`211-Features:` / ` MLST type*;size*;` / `211 End`).
    public init(featReply reply: FTPReply) {
        var names: Set<String> = []
        var facts: Set<String> = []
        var site: Set<String> = []
        var hashes: Set<String> = []
        for line in reply.innerLines {
            let trimmed = line.drop(while: { $0 == " " })
            guard !trimmed.isEmpty else { continue }
            let parts = trimmed.split(separator: " ", maxSplits: 1)
            let name = parts[0].uppercased()
            names.insert(name)
            guard parts.count > 1 else { continue }
            switch name {
            case "MLST":
                for fact in parts[1].split(separator: ";") where !fact.isEmpty {
                    facts.insert(fact.replacingOccurrences(of: "*", with: "").lowercased())
                }
            case "SITE":
                site.insert(parts[1].trimmingCharacters(in: .whitespaces).uppercased())
            case "HASH":
                for algorithm in parts[1].split(separator: ";") where !algorithm.trimmingCharacters(in: .whitespaces).isEmpty {
                    hashes.insert(algorithm.replacingOccurrences(of: "*", with: "").trimmingCharacters(in: .whitespaces).uppercased())
                }
            default:
                break
            }
        }
        self.init(names: names, mlstFacts: facts, siteCommands: site, hashNames: hashes)
    }

    /// `MLSD`/`MLST` machine listings (RFC 3659).
    public var machineListings: Bool { names.contains("MLST") || names.contains("MLSD") }
    /// `MFMT`: setting modification times.
    public var setModificationTime: Bool { names.contains("MFMT") }
    /// `UTF8`: names in UTF-8 (`OPTS UTF8 ON`).
    public var utf8: Bool { names.contains("UTF8") }
    /// `SITE COPY`: server-side copies with `SITE CPFR` and `SITE CPTO` (ProFTPD's mod_copy).
    public var serverSideCopy: Bool { siteCommands.contains("COPY") }

    /// How to ask the server for a file's `algorithm` digest, best first: the `X` command of its
    /// own (`XSHA1`, one line: `250 <hex>`), else `HASH` after `OPTS HASH` selects the algorithm
    /// (draft-bryan-ftpext-hash: `213 <algorithm> <range> <hex> <path>`); `nil` when neither is offered.
    public func hashCommand(for algorithm: String) -> (command: String, select: String?)? {
        let upper = algorithm.uppercased()
        let xName = "X" + upper.replacingOccurrences(of: "-", with: "")
        if names.contains(xName) { return (xName, nil) }
        if hashNames.contains(upper) { return ("HASH", "OPTS HASH \(upper)") }
        return nil
    }
}

