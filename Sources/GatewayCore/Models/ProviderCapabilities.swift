/// What a provider can do that depends on the server or its settings, declared up front so callers
/// and the copy engine choose a strategy without trial and error (server-side copy versus streaming,
/// whether times can be kept, how precisely times compare).
///
/// Abilities that are a type's own are protocols, discovered with `as?` (``FileProviderResumableWrite``,
/// ``FileProviderPositionalWrite``, ``FileProviderSegmentedWrite``, ``FileProviderMonitor``...): there
/// is no flag for them, so the two can't disagree. The behaviour suite checks every claim here on
/// every backend (`CapabilityBehaviourTests`).
public struct ProviderCapabilities: Sendable, Hashable {
    /// Individual abilities.
    public struct Features: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// Copies inside the remote without moving bytes through the client.
        public static let serverSideCopy = Features(rawValue: 1 << 0)
        /// Moves/renames inside the remote without moving bytes through the client.
        public static let serverSideMove = Features(rawValue: 1 << 1)
        /// ``FileProviderBasic/storageProperties(path:)`` returns real figures.
        public static let quota = Features(rawValue: 1 << 2)
        /// Modification times can be set (``FileProviderOperations/setModificationDate(_:path:)``).
        public static let setModificationDate = Features(rawValue: 1 << 3)
        /// Reads may start at an offset and stop after a length (and so an interrupted download can
        /// continue where it stopped).
        public static let rangedRead = Features(rawValue: 1 << 4)
        /// Writes can be made conditional on a version tag (``WriteOptions/ifVersion``).
        public static let conditionalWrite = Features(rawValue: 1 << 9)
        /// Listing returns modification times.
        public static let modificationTimes = Features(rawValue: 1 << 10)
        /// Hard links can be made (``FileProviderHardLinks``).
        public static let hardLinks = Features(rawValue: 1 << 11)
    }

    /// The abilities above.
    public var features: Features
    /// Hashes the backend reports for a stored file without a download (through
    /// ``FileProviderHashing``): stored by the server, or computed from a local file.
    public var hashAlgorithms: Set<HashAlgorithm>
    /// How precisely the backend stores modification times; two times closer than this are equal.
    public var modificationTimePrecision: Duration

    /// Creates a capability declaration.
    public init(features: Features, hashAlgorithms: Set<HashAlgorithm> = [], modificationTimePrecision: Duration = .seconds(1)) {
        self.features = features
        self.hashAlgorithms = hashAlgorithms
        self.modificationTimePrecision = modificationTimePrecision
    }

    /// Shorthand for `features.contains(feature)`.
    public func supports(_ feature: Features) -> Bool { features.contains(feature) }
}
