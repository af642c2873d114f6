import Foundation

/// What an FTP server says it supports, from its `FEAT` reply (RFC 2389).
public struct FTPFeatures: Sendable, Hashable {
    /// Upper-cased feature names (`MLST`, `MFMT`, `UTF8`, `SIZE`, `REST`, ...).
    public var names: Set<String>
    /// The facts `MLST` offers (lower-cased, `*` removed), e.g. `type`, `size`, `modify`.
    public var mlstFacts: Set<String>

    /// No features: a server that does not answer FEAT.
    public static let none = FTPFeatures(names: [], mlstFacts: [])

    /// Creates a feature set.
    public init(names: Set<String>, mlstFacts: Set<String>) {
        self.names = names
        self.mlstFacts = mlstFacts
    }

    /// Reads a FEAT reply (`211-Features:` / ` MLST type*;size*;` / `211 End`).
    public init(featReply reply: FTPReply) {
        var names: Set<String> = []
        var facts: Set<String> = []
        for line in reply.innerLines {
            let trimmed = line.drop(while: { $0 == " " })
            guard !trimmed.isEmpty else { continue }
            let parts = trimmed.split(separator: " ", maxSplits: 1)
            let name = parts[0].uppercased()
            names.insert(name)
            if name == "MLST", parts.count > 1 {
                for fact in parts[1].split(separator: ";") where !fact.isEmpty {
                    facts.insert(fact.replacingOccurrences(of: "*", with: "").lowercased())
                }
            }
        }
        self.init(names: names, mlstFacts: facts)
    }

    /// `MLSD`/`MLST` machine listings (RFC 3659).
    public var machineListings: Bool { names.contains("MLST") || names.contains("MLSD") }
    /// `MFMT`: setting modification times.
    public var setModificationTime: Bool { names.contains("MFMT") }
    /// `UTF8`: names in UTF-8 (`OPTS UTF8 ON`).
    public var utf8: Bool { names.contains("UTF8") }
}

