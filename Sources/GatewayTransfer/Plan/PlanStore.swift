public import Foundation
public import GatewayCore

/// A plan's folder on any remote that reads and writes files: a local folder, a WebDAV or SFTP
/// folder, so that workers on other machines need no shared file system.
///
/// The folder holds `manifest.json`, `chunks/NNNNNN.tsv` and `state/` (the workers' markers, see
/// ``ChunkMarker``). Every file is written atomically; the manifest last, so a plan cut off while
/// it was written has none and no worker takes it for a plan.
public struct PlanStore: Sendable {
    /// The remote holding the plan.
    public let provider: any FileProviderReadWrite
    /// The plan's folder on it.
    public let path: String

    /// The largest manifest read (a plan of 100,000 chunks takes about 25 MiB).
    static let manifestLimit = 64 << 20
    /// The largest marker read (a `check` chunk's differences are listed in it).
    static let markerLimit = 256 << 20

    /// The plan folder `path` on `provider`.
    public init(provider: any FileProviderReadWrite, path: String) {
        self.provider = provider
        self.path = path
    }

    private func child(_ parts: String...) throws -> String {
        try parts.reduce(path) { try RemotePath.join($0, $1) }
    }

    // MARK: Writing a plan

    /// Writes a new plan: its chunk files, then its manifest. Refuses a folder that already holds
    /// a manifest (`FileProviderError.alreadyExists`): a new plan needs a new folder.
    public func create(_ output: PlanBuilder.Output) async throws {
        let manifest = try child(PlanLayout.manifest)
        if try await provider.itemIfPresent(path: manifest) != nil {
            throw CocoaError.described(.fileWriteFileExists, path: manifest, remote: nil,
                                       reason: "a plan is already there: give a new folder (or remove the old plan)")
        }
        guard let folders = provider as? any FileProviderOperations else {
            throw FileProviderError.unsupported(operation: "creating a plan's folders", path: path)
        }
        try await folders.createFolder(path: try child(PlanLayout.chunks), withIntermediateDirectories: true)
        try await folders.createFolder(path: try child(PlanLayout.state), withIntermediateDirectories: true)
        for (index, file) in output.chunkFiles.enumerated() {
            try await provider.write(path: try child(PlanLayout.chunks, PlanLayout.chunkFile(index)), fromLocalFile: file)
        }
        _ = try await provider.writeContents(path: manifest, data: try output.plan.encoded())
    }

    // MARK: Reading a plan

    /// Reads and checks the manifest. A folder without one is ``PlanFormatError/badManifest(_:)``.
    public func manifest() async throws -> TransferPlan {
        let data: Data
        do {
            data = try await provider.readStream(path: try child(PlanLayout.manifest)).collect(limit: Self.manifestLimit)
        } catch where error.failureKind == .notFound {
            throw PlanFormatError.badManifest("\(path) holds no manifest.json (make one with `gateway plan`)")
        }
        return try TransferPlan.decode(data)
    }

    /// Fetches chunk `index` into the local file `file` and checks it against the manifest (its
    /// length and SHA-256); throws ``PlanFormatError/chunkChanged(index:reason:)`` when it differs.
    public func fetchChunk(_ index: Int, of plan: TransferPlan, to file: URL) async throws -> PlanChunk {
        guard plan.chunks.indices.contains(index) else { throw PlanFormatError.noSuchChunk(index: index, count: plan.chunks.count) }
        let record = plan.chunks[index]
        var writer = try BufferedFileWriter(creating: file)
        var hasher = ContentHasher(.sha256)
        var length: Int64 = 0
        do {
            let stream = try await provider.readStream(path: try child(PlanLayout.chunks, PlanLayout.chunkFile(index)))
            for try await data in stream {
                length += Int64(data.count)
                guard length <= record.length else { break }
                hasher.update(data)
                try writer.write(data)
            }
            try writer.close()
        } catch where error.failureKind == .notFound {
            throw PlanFormatError.chunkChanged(index: index, reason: "its chunk file is missing")
        }
        guard length == record.length else {
            throw PlanFormatError.chunkChanged(index: index, reason: length > record.length
                ? "it is longer than the \(record.length) bytes planned" : "it has \(length) of the \(record.length) bytes planned")
        }
        guard hasher.finalize() == record.sha256 else { throw PlanFormatError.chunkChanged(index: index, reason: "its SHA-256 differs") }
        return PlanChunk(file: file, rangeKey: plan.rangeKey)
    }

    // MARK: Markers

    /// Writes a chunk's marker (atomically) under its state's name.
    public func write(_ marker: ChunkMarker) async throws {
        _ = try await provider.writeContents(path: try child(PlanLayout.state, ChunkMarker.fileName(chunk: marker.chunk, state: marker.state)),
                                             data: try marker.encoded())
    }

    /// Removes a chunk's marker of `state`, if there is one.
    public func removeMarker(chunk: Int, state: ChunkMarker.State) async throws {
        guard let remover = provider as? any FileProviderOperations else { return }
        do {
            try await remover.removeItem(path: try child(PlanLayout.state, ChunkMarker.fileName(chunk: chunk, state: state)), recursive: false)
        } catch where error.failureKind == .notFound {}
    }

    /// A chunk's marker of `state` for `plan`, or `nil` when there is none (or it belongs to
    /// another plan, or does not read).
    public func marker(chunk: Int, state: ChunkMarker.State, of plan: TransferPlan) async throws -> ChunkMarker? {
        let data: Data
        do {
            data = try await provider.readStream(path: try child(PlanLayout.state, ChunkMarker.fileName(chunk: chunk, state: state)))
                .collect(limit: Self.markerLimit)
        } catch where error.failureKind == .notFound {
            return nil
        }
        guard let marker = ChunkMarker.decode(data), marker.fingerprint == plan.fingerprint, marker.chunk == chunk,
              marker.state == state else { return nil }
        return marker
    }

    /// Every marker of `plan`, by chunk: one listing of `state/`, then the markers read (eight at
    /// a time). With `states`, only markers in those states are read.
    public func markers(of plan: TransferPlan, states: Set<ChunkMarker.State> = Set(ChunkMarker.State.allCases)) async throws
        -> [Int: [ChunkMarker.State: ChunkMarker]] {
        var names: [(chunk: Int, state: ChunkMarker.State)] = []
        do {
            for try await item in provider.contentsOfDirectory(path: try child(PlanLayout.state)).entries {
                if let parsed = ChunkMarker.parse(fileName: item.name), plan.chunks.indices.contains(parsed.chunk),
                   states.contains(parsed.state) { names.append(parsed) }
            }
        } catch where error.failureKind == .notFound {
            return [:]
        }
        var result: [Int: [ChunkMarker.State: ChunkMarker]] = [:]
        try await withThrowingTaskGroup(of: ChunkMarker?.self) { group in
            var next = names.makeIterator()
            func addNext() -> Bool {
                guard let name = next.next() else { return false }
                group.addTask { try await self.marker(chunk: name.chunk, state: name.state, of: plan) }
                return true
            }
            for _ in 0..<8 where !addNext() { break }
            while let marker = try await group.next() {
                if let marker { result[marker.chunk, default: [:]][marker.state] = marker }
                _ = addNext()
            }
        }
        return result
    }

    /// Records that `gateway finalize` succeeded (what it merged, as JSON).
    public func writeFinalized(_ data: Data) async throws {
        _ = try await provider.writeContents(path: try child(PlanLayout.state, PlanLayout.finalized), data: data)
    }

    /// Whether `gateway finalize` succeeded on this plan.
    public func isFinalized() async throws -> Bool {
        try await provider.itemIfPresent(path: try child(PlanLayout.state, PlanLayout.finalized)) != nil
    }
}
