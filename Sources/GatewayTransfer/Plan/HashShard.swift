/// One of `count` shards of a tree, chosen by a hash of each file's path (`--hash-shard K/N`): the
/// quick way to split a run over N workers without a plan. Every worker lists the whole tree and
/// takes the files whose path relative to the source hashes to its `index`.
///
/// The hash is 64-bit FNV-1a of the path's UTF-8 bytes, the same on every machine and every
/// version, so N workers together take every file exactly once.
public struct HashShard: Sendable, Hashable, CustomStringConvertible {
    /// This worker's shard, `0..<count`.
    public let index: Int
    /// How many shards there are.
    public let count: Int

    /// A shard; `nil` unless `0 <= index < count`.
    public init?(index: Int, count: Int) {
        guard count >= 1, (0..<count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// Reads `K/N` (for example `0/4`); `nil` for anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.count <= 9 && $0.allSatisfy({ $0.isASCII && $0.isWholeNumber }) }),
              let index = Int(parts[0]), let count = Int(parts[1]) else { return nil }
        self.init(index: index, count: count)
    }

    /// Whether the file at `relative` (its path relative to the source) is this shard's.
    public func contains(_ relative: String) -> Bool {
        Int(Self.hash(relative) % UInt64(count)) == index
    }

    /// 64-bit FNV-1a of the UTF-8 bytes of `text`.
    public static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    public var description: String { "\(index)/\(count)" }
}
