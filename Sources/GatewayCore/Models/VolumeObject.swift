/// Storage usage of a remote, as far as its backend can tell.
///
/// Each figure is `nil` when the backend does not report it (FTP reports none; some WebDAV servers
/// report only part). Never substitute zeros for unknown values.
public struct VolumeObject: Sendable, Hashable, Codable {
    /// Total capacity in bytes.
    public var totalCapacity: Int64?
    /// Bytes still available to the current user.
    public var availableCapacity: Int64?
    /// Bytes in use.
    public var usedCapacity: Int64?
    /// A human-readable name of the volume, when known (the built-in providers give the remote's name).
    public var name: String?

    /// Creates a volume description; omitted figures are unknown.
    public init(totalCapacity: Int64? = nil, availableCapacity: Int64? = nil, usedCapacity: Int64? = nil, name: String? = nil) {
        self.totalCapacity = totalCapacity
        self.availableCapacity = availableCapacity
        self.usedCapacity = usedCapacity
        self.name = name
    }

    /// `true` when the backend reported none of the figures.
    public var isEmpty: Bool { totalCapacity == nil && availableCapacity == nil && usedCapacity == nil }
}
