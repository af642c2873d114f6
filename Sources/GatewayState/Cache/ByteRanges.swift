/// A set of byte ranges (`start..<end`), kept sorted and merged: which parts of a file a sparse
/// cache file holds.
public struct ByteRanges: Sendable, Equatable {
    /// An empty set.
    public init() {}

    /// Disjoint, non-adjacent ranges in ascending order.
    public private(set) var ranges: [Range<Int64>] = []

    /// How many bytes the set holds.
    public var count: Int64 { ranges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) } }

    /// Adds `range`, merging it with the ranges it touches or overlaps; returns how many bytes
    /// the set holds more than before.
    @discardableResult
    public mutating func insert(_ range: Range<Int64>) -> Int64 {
        guard !range.isEmpty else { return 0 }
        // The first range that ends at or after the new one's start (could touch or overlap it).
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        var start = range.lowerBound
        var end = range.upperBound
        var last = low
        var merged: Int64 = 0
        while last < ranges.count, ranges[last].lowerBound <= end {
            start = min(start, ranges[last].lowerBound)
            end = max(end, ranges[last].upperBound)
            merged += ranges[last].upperBound - ranges[last].lowerBound
            last += 1
        }
        ranges.replaceSubrange(low..<last, with: [start..<end])
        return (end - start) - merged
    }

    /// Whether every byte of `range` is held.
    public func contains(_ range: Range<Int64>) -> Bool {
        guard !range.isEmpty else { return true }
        return firstMissing(in: range) == nil
    }

    /// The first byte of `range` not held (`nil` when all are).
    public func firstMissing(in range: Range<Int64>) -> Int64? {
        guard !range.isEmpty else { return nil }
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound <= range.lowerBound { low = middle + 1 } else { high = middle }
        }
        guard low < ranges.count, ranges[low].lowerBound <= range.lowerBound else { return range.lowerBound }
        let end = ranges[low].upperBound
        return end >= range.upperBound ? nil : end
    }

    /// How many bytes of `range` the set does not hold.
    public func missingCount(in range: Range<Int64>) -> Int64 {
        guard !range.isEmpty else { return 0 }
        var held: Int64 = 0
        for existing in ranges where existing.upperBound > range.lowerBound && existing.lowerBound < range.upperBound {
            held += min(existing.upperBound, range.upperBound) - max(existing.lowerBound, range.lowerBound)
        }
        return (range.upperBound - range.lowerBound) - held
    }

    /// The first run of bytes of `range` not held (`nil` when all are).
    public func firstGap(in range: Range<Int64>) -> Range<Int64>? {
        guard let start = firstMissing(in: range) else { return nil }
        let next = ranges.first { $0.lowerBound > start }?.lowerBound ?? range.upperBound
        return start..<min(next, range.upperBound)
    }
}
