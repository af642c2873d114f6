public import Foundation

/// What a writer recorded about the source of a file it copied, on a remote that cannot set
/// modification times itself: the source's modification time, and its content hashes when known.
///
/// Plain WebDAV servers give every file the time it was written (`getlastmodified`), so a copy
/// cannot carry its source's time there. Where the server keeps dead properties (RFC 4918 §4.2,
/// Apache mod_dav among them), the WebDAV provider stores the source's time and hashes in a property
/// of the gateway's own namespace on upload (the `dead_properties` key), and reports it here while
/// the file is unchanged since: the stamp is dropped once the file's size differs from the one
/// recorded, or it was written after the stamp was. The copy engine compares a source against its
/// destination's stamp as it would against a modification time the destination keeps.
public struct SourceStamp: Sendable, Hashable {
    /// The source's modification time when the file was copied from it.
    public var modificationDate: Date?
    /// The source's content hashes (lowercase hexadecimal) when the writer knew them.
    public var hashes: [HashAlgorithm: String]

    /// Creates a stamp.
    public init(modificationDate: Date?, hashes: [HashAlgorithm: String] = [:]) {
        self.modificationDate = modificationDate
        self.hashes = hashes
    }
}

/// Extra details a listing may be asked for, where they cost the backend more than the entries
/// themselves. Backends that have no such detail ignore the request.
public struct ListingDetails: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    /// Creates a set of details from its raw value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Each entry's ``FileObject/sourceStamp``. On Apache mod_dav, asking for a dead property
    /// makes a large listing about three times slower (0.14 s against 0.05 s for 10,000 entries),
    /// so only the copy engine's comparisons ask for it; `ls` does not.
    public static let sourceStamps = ListingDetails(rawValue: 1 << 0)
}
