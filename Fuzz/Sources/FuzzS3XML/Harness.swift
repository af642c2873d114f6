// libFuzzer harness for what an S3 server sends: an XML answer read by `S3XMLDocument.parse`, then
// as a ListObjectsV2 page (`S3ListPage`) and as an error (`S3ErrorBody`). An `S3XMLError` is an
// expected outcome; a trap, a crash, a leak or a huge allocation is not. Whatever is read must be
// within the bounds the parser promises, and no larger than the input.
import Foundation
import GatewayS3Protocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzS3XML(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
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
    if let error = S3ErrorBody(document) {
        precondition(error.code.utf8.count <= 800 && (error.message?.count ?? 0) <= 500, "an error text past its bound")
    }
    return 0
}
