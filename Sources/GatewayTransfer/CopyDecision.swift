public import GatewayCore

/// Whether a file needs copying, given what the destination holds.
public enum CopyDecision: Sendable, Equatable {
    case copy
    case skip(reason: String)

    /// Decides like rclone: by default the same size and modification time (within `precision`)
    /// means unchanged. Where the destination cannot keep modification times (`comparesTimes` is
    /// `false`), the size alone decides.
    public static func decide(source: FileObject, destination: FileObject?, options: CopyOptions,
                              precision: Duration, comparesTimes: Bool) -> CopyDecision {
        guard let destination, !destination.isDirectory else { return .copy }
        if options.ignoreExisting { return .skip(reason: "exists") }
        let tolerance = Double(precision.components.seconds) + Double(precision.components.attoseconds) / 1e18
        if options.update, comparesTimes, let sourceTime = source.modificationDate, let destinationTime = destination.modificationDate,
           destinationTime.timeIntervalSince(sourceTime) > tolerance {
            return .skip(reason: "newer at destination")
        }
        guard source.size == destination.size else { return .copy }
        if options.sizeOnly || !comparesTimes { return .skip(reason: "unchanged (same size)") }
        guard let sourceTime = source.modificationDate, let destinationTime = destination.modificationDate else {
            return .skip(reason: "unchanged (same size)")
        }
        return abs(sourceTime.timeIntervalSince(destinationTime)) <= tolerance ? .skip(reason: "unchanged") : .copy
    }
}
