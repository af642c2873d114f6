// libFuzzer harness for what an S3 server sends: an XML answer read by `S3XMLDocument.parse`, then
// as a ListObjectsV2 page (`S3ListPage`), a ListObjectVersions page (`S3VersionsPage`), a bucket's
// versioning (`S3BucketVersioning`) and an error (`S3ErrorBody`); and the same bytes as a trash
// record of versions (`S3VersionManifest`), which is read back from the bucket. An `S3XMLError` is an
// expected outcome; a trap, a crash, a leak or a huge allocation is not. Whatever is read must be
// within the bounds the parser promises, and no larger than the input.
import Foundation
import GatewayS3Protocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzS3XML(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    readManifest(data)
    guard let document = try? S3XMLDocument.parse(data) else { return 0 }
    precondition(document.records.count <= S3XMLDocument.maximumRecords, "more records than the bound")
    for record in document.records {
        for value in record.values.values {
            precondition(value.utf8.count <= S3XMLDocument.maximumValueLength, "a value longer than the bound")
        }
    }
    if let page = try? S3ListPage(document) {
        precondition(page.objects.allSatisfy { $0.size >= 0 }, "a negative size")
        precondition(page.objects.count + page.prefixes.count <= document.records.count, "more entries than records")
        precondition(!page.isTruncated || page.continuationToken != nil, "a truncated page without a token")
    }
    if let page = try? S3VersionsPage(document) {
        precondition(page.versions.allSatisfy { $0.size >= 0 && !$0.versionID.isEmpty }, "a negative size or an empty version id")
        precondition(page.versions.count <= document.records.count, "more versions than records")
        precondition(!page.isTruncated || page.nextKeyMarker != nil, "a truncated page without a marker")
    }
    _ = S3BucketVersioning(document)
    if let error = S3ErrorBody(document) {
        precondition(error.code.utf8.count <= 800 && (error.message?.count ?? 0) <= 500, "an error text past its bound")
    }
    return 0
}

/// The bytes as a version manifest, in two chunks: every line within its bound, every entry as
/// written by `line` reads back the same.
private func readManifest(_ data: Data) {
    var reader = S3VersionManifest.LineReader()
    let middle = data.count / 2
    for chunk in [data.prefix(middle), data.dropFirst(middle)] {
        guard let lines = try? reader.lines(in: Data(chunk)) else { return }
        for line in lines {
            precondition(line.utf8.count <= S3VersionManifest.maximumLineLength, "a line past its bound")
            if let header = try? S3VersionManifest.header(line) {
                precondition(header.path.hasPrefix("/"), "a header path that is not absolute")
            }
            if let entry = try? S3VersionManifest.entry(line) {
                precondition(entry.size >= 0, "a negative size")
                let again = S3VersionManifest.line(entry)
                precondition((try? S3VersionManifest.entry(again.dropLast())) == entry, "an entry that does not read back")
            }
        }
    }
}
