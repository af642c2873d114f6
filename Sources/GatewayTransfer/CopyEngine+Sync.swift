import GatewayCore

extension CopyEngine {
    /// Deletes what the destination has and the source lacks, only when every copy succeeded.
    func deleteExtras(from source: TransferEndpoint, to destination: TransferEndpoint, state: RunState) async throws {
        let failures = state.summary.failed
        guard failures == 0 else {
            state.event(.notice("not deleting anything at the destination: \(failures) item(s) failed in this run"))
            return
        }
        guard let remover = destination.provider as? any FileProviderOperations else { return }
        // First find the extras (a folder counts once, its contents go with it), then delete them:
        // deleting while walking would pull folders from under the walk.
        var extras: [FileObject] = []
        do {
            for try await item in destination.provider.walk(path: destination.path) {
                try Task.checkCancellation()
                guard let relative = RemotePath.relative(item.path, to: destination.path), !relative.isEmpty else { continue }
                if extras.contains(where: { $0.isDirectory && item.path.hasPrefix($0.path + "/") }) { continue }
                let counterpart = try await source.provider.itemIfPresent(path: try RemotePath.join(source.path, relative))
                if let counterpart, counterpart.isDirectory == item.isDirectory { continue }
                extras.append(item)
            }
        } catch where error.failureKind == .notFound {
            return  // no destination folder yet: nothing to delete
        }
        for item in extras {
            let relative = RemotePath.relative(item.path, to: destination.path) ?? item.path
            if options.dryRun {
                state.deleted(relative, planned: true)
                continue
            }
            do {
                try await remover.removeItem(path: item.path, recursive: true)
                state.deleted(relative)
            } catch where error.failureKind == .notFound {
                continue
            } catch {
                state.fail(relative, operation: "delete", error: error)
            }
        }
    }

    /// Compares two trees (or files): what is missing, extra or different at the destination.
    /// Files are compared by size, and by modification time too when both sides keep exact times;
    /// with ``CopyOptions/checksum``, files of the same size by content hash instead.
    public func check(source: TransferEndpoint, destination: TransferEndpoint) async throws -> CheckReport {
        var report = CheckReport()
        if let notice = checksumNotice(source, destination) { report.notices.append(notice) }
        let root = try await source.provider.attributesOfItem(path: source.path)
        let comparesTimes = destination.provider.capabilities.supports(.setModificationDate)
            && source.provider.capabilities.supports(.modificationTimes) && !options.sizeOnly
        let precision = max(source.provider.capabilities.modificationTimePrecision, destination.provider.capabilities.modificationTimePrecision)
        func compare(_ item: FileObject, relative: String, at path: String) async {
            do {
                guard let other = try await destination.provider.itemIfPresent(path: path), !other.isDirectory else {
                    report.missing.append(relative)
                    return
                }
                let endpoint = TransferEndpoint(provider: source.provider, path: item.path)
                let checksum = try await compareChecksums(item, on: endpoint, with: other, on: destination, forCopy: false).verdict
                let decision = CopyDecision.decide(source: item, destination: other, options: CopyOptions(sizeOnly: !comparesTimes),
                                                   precision: precision, comparesTimes: comparesTimes, checksum: checksum)
                if case .skip = decision { report.matching += 1 } else { report.different.append(relative) }
            } catch {
                report.errors.append("\(relative): \(ErrorMessage.reason(for: error))")
            }
        }
        guard root.isDirectory else {
            await compare(root, relative: root.name, at: destination.path)
            return report
        }
        for try await item in source.provider.walk(path: source.path) where !item.isDirectory && !item.isLinkToFolder {
            guard let relative = RemotePath.relative(item.path, to: source.path) else { continue }
            await compare(item, relative: relative, at: try RemotePath.join(destination.path, relative))
        }
        do {
            for try await item in destination.provider.walk(path: destination.path) where !item.isDirectory && !item.isLinkToFolder {
                guard let relative = RemotePath.relative(item.path, to: destination.path) else { continue }
                if try await source.provider.itemIfPresent(path: try RemotePath.join(source.path, relative)) == nil {
                    report.extra.append(relative)
                }
            }
        } catch where error.failureKind == .notFound {
            // No destination folder at all: everything is missing, nothing extra.
        }
        return report
    }
}
