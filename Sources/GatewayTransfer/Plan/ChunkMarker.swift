public import Foundation

/// What a worker records about a chunk in the plan's `state/` folder: `NNNNNN.running.json` when
/// it starts, then `NNNNNN.done.json` (nothing failed) or `NNNNNN.failed.json`, each written
/// atomically. `gateway finalize` and `gateway plan-status` read them.
public struct ChunkMarker: Sendable, Hashable, Codable {
    /// Where a chunk stands.
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        case running, done, failed
    }

    /// The plan the marker belongs to (a marker of another plan counts for nothing).
    public var fingerprint: String
    public var chunk: Int
    public var state: State
    /// The worker's host name and process.
    public var host: String
    public var pid: Int32
    public var started: Date
    public var finished: Date?
    public var copied = 0
    public var skipped = 0
    public var failed = 0
    public var deleted = 0
    public var foldersCreated = 0
    public var bytes: Int64 = 0
    public var elapsedSeconds: Double = 0
    /// `check` only: the chunk's files missing or different at the destination, and its matches.
    public var missing: [String]?
    public var different: [String]?
    public var matching: Int?
    /// `check` only: files that could not be compared, with the reason.
    public var errors: [String]?
    /// The ranges of split files the chunk wrote or found unneeded (``TransferPlan/splitFiles``).
    public var ranges: [RangeOutcome]?

    enum CodingKeys: String, CodingKey {
        case fingerprint, chunk, state, host, pid, started, finished, copied, skipped, failed, deleted, bytes
        case missing, different, matching, errors, ranges
        case foldersCreated = "folders_created", elapsedSeconds = "elapsed_seconds"
    }

    /// A marker for a chunk this process starts now.
    public init(plan: TransferPlan, chunk: Int, state: State, started: Date = Date()) {
        fingerprint = plan.fingerprint
        self.chunk = chunk
        self.state = state
        host = ProcessInfo.processInfo.hostName
        pid = ProcessInfo.processInfo.processIdentifier
        self.started = started
    }

    /// The counts of the run it records, as a summary (without its wall time).
    public var summary: CopySummary {
        var summary = CopySummary()
        summary.copied = copied
        summary.skipped = skipped
        summary.failed = failed
        summary.deleted = deleted
        summary.foldersCreated = foldersCreated
        summary.bytes = bytes
        summary.ranges = ranges ?? []
        return summary
    }

    /// Takes a copy run's counts.
    public mutating func record(_ summary: CopySummary) {
        copied = summary.copied
        skipped = summary.skipped
        failed = summary.failed
        deleted = summary.deleted
        foldersCreated = summary.foldersCreated
        bytes = summary.bytes
        ranges = summary.ranges.isEmpty ? nil : summary.ranges
        elapsedSeconds = Double(summary.elapsed.components.seconds) + Double(summary.elapsed.components.attoseconds) / 1e18
    }

    /// Takes a check run's findings. Differences are findings, not failures (the chunk is done,
    /// and `finalize` reports them); `failed` counts the files that could not be compared.
    public mutating func record(_ report: CheckReport) {
        missing = report.missing
        different = report.different
        matching = report.matching
        errors = report.errors
        failed = report.errors.count
    }

    /// The file name of a chunk's marker in a state.
    public static func fileName(chunk: Int, state: State) -> String {
        "\(PlanLayout.number(chunk)).\(state.rawValue).json"
    }

    /// The chunk and state a marker's file name names; `nil` for any other name.
    public static func parse(fileName name: String) -> (chunk: Int, state: State)? {
        let parts = name.split(separator: ".")
        guard parts.count == 3, parts[2] == "json", parts[0].count == 6, parts[0].allSatisfy({ $0.isASCII && $0.isWholeNumber }),
              let chunk = Int(parts[0]), let state = State(rawValue: String(parts[1])) else { return nil }
        return (chunk, state)
    }

    /// The marker as JSON.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = PlanDates.encoding
        return try encoder.encode(self)
    }

    /// Reads a marker; `nil` when it does not read (a damaged marker counts as absent).
    public static func decode(_ data: Data) -> ChunkMarker? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = PlanDates.decoding
        return try? decoder.decode(ChunkMarker.self, from: data)
    }
}

/// Where a plan keeps its parts, below its folder.
public enum PlanLayout {
    /// The manifest.
    public static let manifest = "manifest.json"
    /// The chunk files' folder.
    public static let chunks = "chunks"
    /// The markers' folder.
    public static let state = "state"
    /// What `gateway finalize` records once it succeeded.
    public static let finalized = "finalized.json"

    /// A chunk's number as its files write it: six digits or more (`000042`).
    public static func number(_ chunk: Int) -> String {
        let digits = String(chunk)
        return digits.count >= 6 ? digits : String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// A chunk file's name.
    public static func chunkFile(_ chunk: Int) -> String { "\(number(chunk)).tsv" }
}

/// Dates in plans and markers: ISO 8601 in UTC with milliseconds (`2026-11-27T14:21:20.123Z`).
enum PlanDates {
    private static func formatter() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }

    static let encoding = JSONEncoder.DateEncodingStrategy.custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(formatter().string(from: date))
    }

    static let decoding = JSONDecoder.DateDecodingStrategy.custom { decoder in
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        let plain = ISO8601DateFormatter()
        guard text.utf8.count <= 64, let date = formatter().date(from: text) ?? plain.date(from: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 date")
        }
        return date
    }
}
