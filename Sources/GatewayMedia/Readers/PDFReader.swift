#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMediaLibraries
import Foundation
import GatewayCore

/// PDF document information through poppler-glib: title, author, page count and the first page's
/// size. A PDF's cross-reference table sits at its end and points anywhere, so poppler reads a
/// complete file: a remote PDF is first fetched into the input's cache file (on disk, not memory).
enum PDFReader {
    /// poppler-glib, loaded on first use (it is not linked).
    static let ready: Result<Void, MediaLibraryError> = {
        var message: UnsafePointer<CChar>?
        guard gw_media_load_poppler(&message) == 0 else {
            return .failure(MediaLibraryError(message: "PDF metadata needs poppler-glib: \(message.map { String(cString: $0) } ?? "it could not start")"))
        }
        return .success(())
    }()

    /// Fills the PDF fields of `metadata`. Returns `false` when poppler cannot open the document.
    static func read(_ input: any MediaInput, into metadata: inout MediaMetadata) throws -> Bool {
        try ready.get()
        let descriptor = dup(try input.completeDescriptor())
        guard descriptor >= 0 else { throw CocoaError.posix(errno, path: "") }
        var error: UnsafeMutablePointer<gw_g_error>?
        // poppler owns (and closes) the descriptor it is given.
        guard let document = gw_poppler_document_new_from_fd(descriptor, &error) else {
            if let error {
                metadata.other["error"] = String(cString: error.pointee.message)
                gw_g_error_free(error)
            }
            return false
        }
        defer { gw_g_object_unref(UnsafeMutableRawPointer(document)) }
        func take(_ value: UnsafeMutablePointer<CChar>?) -> String? {
            guard let value else { return nil }
            defer { gw_g_free(value) }
            let text = String(cString: value).trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : text
        }
        metadata.format = "pdf"
        metadata.title = take(gw_poppler_document_get_title(document))
        metadata.author = take(gw_poppler_document_get_author(document))
        if let subject = take(gw_poppler_document_get_subject(document)) { metadata.other["pdf_subject"] = subject }
        if let creator = take(gw_poppler_document_get_creator(document)) { metadata.other["pdf_creator"] = creator }
        if let producer = take(gw_poppler_document_get_producer(document)) { metadata.other["pdf_producer"] = producer }
        let pages = Int(gw_poppler_document_get_n_pages(document))
        if pages > 0 { metadata.pages = pages }
        if pages > 0, let page = gw_poppler_document_get_page(document, 0) {
            defer { gw_g_object_unref(UnsafeMutableRawPointer(page)) }
            var width = 0.0, height = 0.0
            gw_poppler_page_get_size(page, &width, &height)
            if width.isFinite, height.isFinite, width > 0, height > 0, width < 1e7, height < 1e7 {
                metadata.width = Int(saturating: width.rounded())
                metadata.height = Int(saturating: height.rounded())
            }
        }
        return true
    }
}
