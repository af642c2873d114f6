import Foundation
import GatewayCore

/// A file too large for one chunk (``TransferPlan/SplitFile``): each chunk holding one of its ranges
/// writes it into the file's shared partial file at the destination (``FileProviderRangedWrite``);
/// `gateway finalize` fills any range no chunk wrote, then moves the whole file into place, through
/// the trash and the undo journal as any copy.
extension CopyEngine {
    /// Writes one range of a split file, or records that the destination already holds the file
    /// (and no other range has started its partial file). The source must still be the file the
    /// plan listed (size and time): a changed one fails the range, so two versions never mix.
    func processRange(_ job: Job, range: PlanEntry.ByteRange, key: String?, destinationPath: String, from source: TransferEndpoint,
                      to destination: TransferEndpoint, existing: FileObject?, progress: TransferProgress?, state: RunState) async {
        guard let key, let writer = destination.provider as? any FileProviderRangedWrite else {
            state.fail(job.relative, operation: "copy", side: .destination, item: destinationPath,
                       error: FileProviderError.unsupported(operation: "writing one file in ranges from several workers", path: destinationPath))
            return
        }
        guard let reader = source.provider as? any FileProviderReadWrite else {
            state.fail(job.relative, operation: "copy", error: FileProviderError.unsupported(operation: "reading files", path: job.source.path))
            return
        }
        let rules = timeRules(source, destination)
        let decision = CopyDecision.decide(source: job.source, destination: existing, options: options,
                                           precision: rules.precision, comparesTimes: rules.comparesTimes)
        if case .skip = decision {
            do {
                if try await writer.rangedWriteSize(path: destinationPath, key: key) == nil {
                    progress?.addBytes(range.length)
                    state.range(RangeOutcome(path: job.relative, offset: range.offset, written: false), bytes: 0)
                    return
                }
            } catch {
                state.fail(job.relative, operation: "copy", side: .destination, item: destinationPath, error: error)
                return
            }
        }
        if options.dryRun {
            if range.offset == 0 { state.event(.wouldDo(action: .copy, path: job.relative)) }
            return
        }
        progress?.setCurrentItem(job.relative)
        do {
            try await retrying(job.relative, state: state, progress: progress, bytes: range.length) { attempt in
                try await copyRange(range, of: job.source, from: reader, source: source, to: writer, path: destinationPath, key: key,
                                    progress: attempt)
            }
            state.range(RangeOutcome(path: job.relative, offset: range.offset, written: true), bytes: range.length)
        } catch {
            state.fail(job.relative, operation: "copy", error: error)
        }
    }

    /// Reads `range` of the planned source file `planned` (after checking it is unchanged) into
    /// the partial file of `path` under `key`. `checked`: the source's attributes, when the caller
    /// has just checked them (the read is still made on that version only).
    private func copyRange(_ range: PlanEntry.ByteRange, of planned: FileObject, from reader: any FileProviderReadWrite,
                           source: TransferEndpoint, to writer: any FileProviderRangedWrite, path: String, key: String,
                           checked: FileObject? = nil, progress: TransferProgress?) async throws {
        let current: FileObject
        if let checked { current = checked } else { current = try await unchangedSource(planned, on: reader, source: source) }
        let stream = try await reader.readStream(path: planned.path, options: ReadOptions(offset: range.offset, length: range.length,
                                                                                         ifVersion: current.versionTag))
        try await writer.writeRange(path: path, key: key, size: planned.size ?? 0, offset: range.offset, length: range.length,
                                    from: stream, progress: progress)
    }

    /// The offset of the first range in `written` whose first or last 4 KiB the partial file of
    /// `path` does not hold as `source` (a checked version) has them; `nil` when all match.
    private func firstDifferingRange(_ file: TransferPlan.SplitFile, written: Set<Int64>, key: String, source: FileObject,
                                     reader: any FileProviderReadWrite, writer: any FileProviderRangedWrite, path: String) async throws -> Int64? {
        let edge: Int64 = 4096
        for range in file.byteRanges where written.contains(range.offset) && range.length > 0 {
            var spans = [(offset: range.offset, length: min(edge, range.length))]
            if range.length > edge { spans.append((range.offset + range.length - edge, edge)) }
            for span in spans {
                let expected = try await reader.readStream(path: source.path, options: ReadOptions(offset: span.offset, length: span.length,
                                                                                                  ifVersion: source.versionTag)).collect()
                let held = try await writer.rangedWriteContents(path: path, key: key, offset: span.offset, length: span.length)
                if held != expected { return range.offset }
            }
        }
        return nil
    }

    /// The source file's attributes now, when it is still the file `planned` describes (its size,
    /// and its time within the source's precision); else it fails with
    /// ``FileProviderError/versionMismatch(path:expected:actual:)``.
    private func unchangedSource(_ planned: FileObject, on reader: any FileProviderReadWrite, source: TransferEndpoint) async throws -> FileObject {
        let current = try await reader.attributesOfItem(path: planned.path)
        let tolerance = max(source.provider.capabilities.modificationTimePrecision.inSeconds, 0.000_001)
        let sameTime: Bool
        switch (current.modificationDate, planned.modificationDate) {
        case (let now?, let then?): sameTime = abs(now.timeIntervalSince(then)) <= tolerance
        case (nil, nil): sameTime = true
        default: sameTime = false
        }
        guard !current.isDirectory, current.size == planned.size, sameTime else {
            func describe(_ item: FileObject) -> String {
                "\(item.size.map { "\($0) bytes" } ?? "no size"), modified "
                    + (item.modificationDate.map { $0.formatted(.iso8601) } ?? "at no time")
            }
            throw FileProviderError.versionMismatch(path: planned.path, expected: describe(planned) + " as planned (make a new plan)",
                                                    actual: describe(current))
        }
        return current
    }

    /// What `gateway finalize` does for each split file once every chunk is done: with every range
    /// written, moves the file into place (replacing the destination's through the trash); with
    /// some written, first writes the others (their chunks found the file unneeded, and it changed
    /// since); with none written, or its partial file gone, copies or skips it as a whole file.
    func assemble(_ files: [TransferPlan.SplitFile], key: String, outcomes: [RangeOutcome], mode: CopyMode,
                  from source: TransferEndpoint, to destination: TransferEndpoint, state: RunState) async {
        var written: [String: Set<Int64>] = [:]
        for outcome in outcomes where outcome.written { written[outcome.path, default: []].insert(outcome.offset) }
        for file in files {
            guard !Task.isCancelled else { return }
            await assemble(file, key: key, written: written[file.path] ?? [], mode: mode, from: source, to: destination, state: state)
        }
    }

    private func assemble(_ file: TransferPlan.SplitFile, key: String, written: Set<Int64>, mode: CopyMode,
                          from source: TransferEndpoint, to destination: TransferEndpoint, state: RunState) async {
        let relative = file.path
        let sourceFile: TransferEndpoint, target: TransferEndpoint
        do {
            (sourceFile, target) = (try source.appending(relative), try destination.appending(relative))
        } catch {
            state.fail(relative, operation: "finalize", error: error)
            return
        }
        let planned = FileObject(path: sourceFile.path, type: .file, size: file.size, modificationDate: file.modificationDate)
        let job = Job(source: planned, relative: relative, freshFolder: false)
        guard let writer = destination.provider as? any FileProviderRangedWrite,
              let reader = source.provider as? any FileProviderReadWrite else {
            state.fail(relative, operation: "finalize", side: .destination, item: target.displayName,
                       error: FileProviderError.unsupported(operation: "writing one file in ranges from several workers", path: target.path))
            return
        }
        let existing: FileObject?
        let stored: Int64?
        do {
            existing = try await destination.provider.itemIfPresent(path: target.path)
            stored = try await writer.rangedWriteSize(path: target.path, key: key)
        } catch {
            state.fail(relative, operation: "finalize", side: .destination, item: target.displayName, error: error)
            return
        }
        // (A partial file grows to the planned size as its ranges land where a range only extends
        // it: WebDAV. Larger is not this plan's.)
        guard !written.isEmpty, let stored, stored <= file.size else {
            // No chunk wrote a range (the destination held the file), or the partial file is gone
            // (removed by hand, or as a leftover): decided and copied as a whole file.
            if !written.isEmpty {
                state.event(.notice("\(relative): the partial file its ranges were written to is gone; copying it whole"))
            }
            if stored != nil, !options.dryRun { try? await writer.discardRanges(path: target.path, key: key) }
            await process(job, mode: mode, destinationPath: target.path, from: source, to: destination, existing: existing,
                          progress: nil, state: state)
            return
        }
        if options.dryRun {
            state.planned(relative, action: mode == .move ? .move : .copy, bytes: 0)
            return
        }
        // Both ends of every range written, as the destination holds them, against the source's: a
        // server that lost a range written at the same time as another (one that copies the file at
        // each write, say) is caught before the file takes its name, and the file is copied whole.
        let checked: FileObject
        do {
            checked = try await unchangedSource(planned, on: reader, source: source)
            if let lost = try await firstDifferingRange(file, written: written, key: key, source: checked, reader: reader,
                                                        writer: writer, path: target.path) {
                state.event(.notice("\(relative): the destination does not hold the range at byte \(lost) as the source has it; copying it whole"))
                try? await writer.discardRanges(path: target.path, key: key)
                await process(job, mode: mode, destinationPath: target.path, from: source, to: destination, existing: existing,
                              progress: nil, state: state)
                return
            }
        } catch {
            state.fail(relative, operation: "finalize", item: target.displayName, error: error)
            return
        }
        var filled: Int64 = 0
        var transfer = TransferOptions(overwrite: true, preserveModificationTimes: options.preserveModificationTimes)
        let undo = FileUndo(options: options, mode: .copy, job: job, source: sourceFile, target: target, existing: existing,
                            serverSideMove: false)
        undo.begin(&transfer, source: sourceFile, existing: existing, serverSideMove: false)
        do {
            // The source was checked before the ranges to fill (each is read on that version), and
            // is once more before the file takes its name.
            let missing = file.byteRanges.filter { !written.contains($0.offset) }
            for range in missing {
                try await retrying(relative, state: state) { _ in
                    try await copyRange(range, of: planned, from: reader, source: source, to: writer, path: target.path, key: key,
                                        checked: checked, progress: nil)
                }
                filled += range.length
            }
            // The last moment to find the source changed since its ranges were read.
            _ = try await unchangedSource(planned, on: reader, source: source)
            var write = WriteOptions(overwrite: true, atomically: true)
            write.beforeReplacing = transfer.beforeReplacing
            if options.preserveModificationTimes { write.modificationDate = file.modificationDate }
            _ = try await writer.commitRanges(path: target.path, key: key, size: file.size, options: write)
        } catch {
            await undo.failed()
            state.fail(relative, operation: "finalize", item: target.displayName, error: error)
            return
        }
        undo.finish(existing: existing, serverSideMove: false, source: sourceFile)
        state.copied(relative, bytes: filled)
        if mode == .move { await removeSource(sourceFile, relative: relative, state: state) }
    }
}
