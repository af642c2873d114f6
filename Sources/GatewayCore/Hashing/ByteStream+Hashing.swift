import Foundation
import Synchronization

extension ByteStream {
    /// The same bytes, hashed as they pass and checked against `expected` (lowercase hexadecimal).
    ///
    /// The check runs before the last byte is handed on: when the stream's ``expectedLength`` is
    /// known, the chunk that completes it is only delivered if the digest matches; otherwise the
    /// end of the stream is. On a mismatch the stream throws
    /// ``FileProviderError/checksumMismatch(path:algorithm:expected:actual:)`` instead, so a writer
    /// never receives the whole file and an atomic write keeps nothing under its final name.
    public func verifying(_ algorithm: HashAlgorithm, expected: String, path: String) -> ByteStream {
        let expected = expected.lowercased()
        let state = Mutex((hasher: ContentHasher(algorithm), count: Int64(0), checked: false))
        let length = expectedLength
        @Sendable func check(_ hasher: ContentHasher) throws {
            let actual = hasher.finalize()
            guard actual == expected else {
                throw FileProviderError.checksumMismatch(path: path, algorithm: algorithm, expected: expected, actual: actual)
            }
        }
        let box = IteratorBox(makeAsyncIterator())
        return ByteStream(expectedLength: length) {
            guard let chunk = try await box.next() else {
                let (hasher, checked) = state.withLock { ($0.hasher, $0.checked) }
                if !checked { try check(hasher) }
                return nil
            }
            let completed = state.withLock { value -> ContentHasher? in
                value.hasher.update(chunk)
                value.count += Int64(chunk.count)
                guard let length, value.count >= length, !value.checked else { return nil }
                value.checked = true
                return value.hasher
            }
            if let completed { try check(completed) }
            return chunk
        }
    }
}
