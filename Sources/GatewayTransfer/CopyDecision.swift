public import GatewayCore

/// What comparing two files' content hashes found (`--checksum`).
public enum ChecksumVerdict: Sendable, Equatable {
    /// Both sides have the hash, and it is the same.
    case same
    /// Both sides have the hash, and it differs.
    case different
    /// A side has no hash for the file (nothing stored), so the size alone decides.
    case unavailable
}

/// Whether a file needs copying, given what the destination holds.
public enum CopyDecision: Sendable, Equatable {
    case copy
    case skip(reason: SkipReason)

    /// Decides like rclone: by default the same size and modification time (within `precision`)
    /// means unchanged. Where the destination cannot keep modification times (`comparesTimes` is
    /// `false`: plain WebDAV, FTP without MFMT), its time is when its copy was written, so a source
    /// of the same size modified after that (beyond `precision`) has changed since and is copied;
    /// otherwise it is unchanged. `sizeOnly` makes the size alone decide. With a `checksum` verdict
    /// (files of the same size compared by hash), the hashes decide instead of the times.
    ///
    /// A destination carrying a ``SourceStamp`` (plain WebDAV with dead properties) is compared by
    /// the source time the stamp recorded, as a destination that keeps times would be.
    public static func decide(source: FileObject, destination: FileObject?, options: CopyOptions,
                              precision: Duration, comparesTimes: Bool, checksum: ChecksumVerdict? = nil) -> CopyDecision {
        guard var destination, !destination.isDirectory else { return .copy }
        var comparesTimes = comparesTimes
        if let stamped = destination.sourceStamp?.modificationDate, options.preserveModificationTimes {
            destination.modificationDate = stamped
            comparesTimes = true
        }
        let tolerance = precision.inSeconds
        // Identical files first, so that a move can tell "same file" from "kept as it is".
        if source.size == destination.size, let checksum {
            switch checksum {
            case .same: return .skip(reason: .unchanged(.checksum))
            case .unavailable: return .skip(reason: .unchanged(.sizeWithoutChecksum))
            case .different: break
            }
        } else if source.size == destination.size {
            if options.sizeOnly { return .skip(reason: .unchanged(.size)) }
            guard let sourceTime = source.modificationDate, let destinationTime = destination.modificationDate else {
                return .skip(reason: .unchanged(.size))
            }
            if comparesTimes {
                if abs(sourceTime.timeIntervalSince(destinationTime)) <= tolerance { return .skip(reason: .unchanged(.sizeAndTime)) }
            } else if sourceTime.timeIntervalSince(destinationTime) <= tolerance {
                return .skip(reason: .unchanged(.notModifiedSinceCopied))
            }
        }
        if options.ignoreExisting { return .skip(reason: .exists) }
        if options.update, comparesTimes, let sourceTime = source.modificationDate, let destinationTime = destination.modificationDate,
           destinationTime.timeIntervalSince(sourceTime) > tolerance {
            return .skip(reason: .newerAtDestination)
        }
        return .copy
    }
}
