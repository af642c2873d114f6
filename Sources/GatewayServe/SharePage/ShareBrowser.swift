import Foundation
import GatewayCore
import GatewayServeRequests
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore

/// What a browser sees of a shared folder or file (`gateway serve links`, and a browser's `GET`
/// of a folder on `serve webdav`): the folder page (sorted, paged, list or gallery), a file's
/// page (preview, metadata, download button), previews (`?thumbnail=N`) and the whole folder as
/// a ZIP (`?download=zip`). Other clients get what they always got: the answers here are for
/// requests that accept `text/html` or name one of these queries.
struct ShareBrowser: Sendable {
    let provider: any FileProviderBasic
    let paths: ServePaths
    /// The shared item's name: the heading of the share's top page and the first breadcrumb.
    let title: String
    /// The largest folder "Download all" makes a ZIP of; `nil` offers no ZIP.
    let zipLimit: Int64?
    let thumbnails: ThumbnailCache?
    /// What keeps two shares' thumbnails apart in the cache (the remote's name).
    let cacheScope: String
    /// A public link: files get a page of their own in a browser, and only plain files and
    /// folders are shown, zipped or served (a symbolic link could lead out of the shared item, a
    /// named pipe would hold a request forever). `serve webdav` (signed-in users) shows folders
    /// as pages and serves files as they are.
    let publicShare: Bool
    let logger: Logger

    /// The preview sizes `?thumbnail=N` makes: the lists' and the file page's (any other size
    /// would be one more picture to make and keep per file).
    static let thumbnailSizes = [256, 1024]
    static let largestThumbnail = 1024
    /// The most entries "Download all" puts in one ZIP.
    static let maximumZipEntries = 1_000_000

    /// Whether `item` is something a public link shows and serves: a plain file or a folder.
    static func isPlain(_ item: FileObject) -> Bool { item.type == .file || item.type == .directory }

    /// Whether every item from the share's root down to `path` (the root excluded) is a plain
    /// folder or file: no symbolic link on the way leads out of the shared item.
    static func reachable(_ path: String, root: String, provider: any FileProviderBasic) async throws -> Bool {
        guard let relative = RemotePath.relative(path, to: root), !relative.isEmpty else { return true }
        var walked = root
        for segment in relative.split(separator: "/") {
            walked = walked == "/" ? "/" + segment : walked + "/" + segment
            guard isPlain(try await provider.attributesOfItem(path: walked)) else { return false }
        }
        return true
    }

    /// Whether a request is a browser's navigation (it accepts `text/html`).
    static func wantsPage(_ request: Request) -> Bool {
        acceptsHTML(request.headers[.accept])
    }

    /// Whether an `Accept` header names `text/html` with a weight above 0 (RFC 9110 section
    /// 12.5.1): a browser's navigation does, `text/html;q=0` and `*/*` do not.
    static func acceptsHTML(_ header: String?) -> Bool {
        guard let header, header.utf8.count <= 8192 else { return false }
        return header.split(separator: ",").contains { range in
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == "text/html" else { return false }
            guard let weight = parts.dropFirst().first(where: { $0.hasPrefix("q=") }) else { return true }
            return (Double(weight.dropFirst(2)) ?? 0) > 0
        }
    }

    /// Whether the request asks for a file's bytes as a download (`?download`).
    static func wantsDownload(_ request: Request) -> Bool {
        FolderPageQuery.parameters(request.uri.query).contains { $0.key == "download" }
    }

    /// The answer to a browser's request for `item` (at `path`), or `nil` for a request the
    /// plain `GET` answers (a file's bytes, a folder's index for a WebDAV client).
    func respond(_ request: Request, path: String, item: FileObject, head: Bool) async throws -> Response? {
        let parameters = FolderPageQuery.parameters(request.uri.query)
        func value(_ key: String) -> String? { parameters.first { $0.key == key }?.value }
        let isFolder = publicShare ? item.isDirectory : FolderPage.isFolder(item)
        if !isFolder, let size = value("thumbnail") {
            return try await thumbnail(of: item, size: size, head: head)
        }
        if isFolder, value("download") == "zip" {
            return try await zip(item, path: path, head: head)
        }
        guard Self.wantsPage(request), value("download") == nil, isFolder || publicShare else { return nil }
        let html = isFolder ? try await folderPage(item, path: path, query: FolderPageQuery(parameters))
            : try await filePage(item, path: path)
        return Self.page(.ok, html, head: head)
    }

    // MARK: - Pages

    /// An HTML response with the page policy.
    static func page(_ status: HTTPResponse.Status, _ html: String, head: Bool = false, headers: HTTPFields = HTTPFields()) -> Response {
        var headers = headers
        headers[.contentType] = "text/html; charset=utf-8"
        // The same URL gives a browser a page and other clients the bytes.
        headers[.vary] = "Accept"
        headers[HTTPField.Name("Content-Security-Policy")!] = SharePageTemplates.contentSecurityPolicy
        let body = ByteBuffer(string: html)
        headers[.contentLength] = String(body.readableBytes)
        return Response(status: status, headers: headers, body: head ? ResponseBody() : ResponseBody(byteBuffer: body))
    }

    /// The page of a link that leads nowhere: `status` 403, 404 or 410, in plain words, the same
    /// whether the path exists or not.
    static func messagePage(_ status: HTTPResponse.Status, head: Bool = false) -> Response {
        let (icon, title, text): (String, String, String) = switch status.code {
        case 410: ("expired", "This link has expired", "The person who shared it set an end date, and it has passed. Ask them for a new link.")
        case 403: ("invalid", "This link is not valid",
                   "It may have been copied incompletely or changed. Check that you have the whole address, or ask for the link again.")
        default: ("missing", "Nothing is shared here",
                  "This link is not found: what it pointed to is no longer shared, or the address is wrong.")
        }
        return message(status, icon: icon, title: title, text: text, pageTitle: title, head: head)
    }

    /// A page with one message: an icon, a heading and a sentence or two.
    static func message(_ status: HTTPResponse.Status, icon: String, title: String, text: String, pageTitle: String,
                        head: Bool = false) -> Response {
        page(status, SharePageTemplates.render("message", ["icon": icon, "title": title, "text": text, "pageTitle": pageTitle]), head: head)
    }

    private func crumbs(to path: String) -> [[String: Any]] {
        guard let relative = RemotePath.relative(path, to: paths.root), !relative.isEmpty else { return [] }
        var result: [[String: Any]] = [["name": title, "href": paths.href(for: paths.root, isFolder: true)]]
        var walked = paths.root
        let segments = relative.split(separator: "/").map(String.init)
        for (index, segment) in segments.enumerated() {
            walked = walked == "/" ? "/" + segment : walked + "/" + segment
            if index == segments.count - 1 {
                result.append(["name": segment])
            } else {
                result.append(["name": segment, "href": paths.href(for: walked, isFolder: true)])
            }
        }
        return result
    }

    private func heading(for item: FileObject, path: String) -> (title: String, subtitle: String?) {
        path == paths.root ? (title, nil) : (item.name, "in \(title)")
    }

    func folderPage(_ folder: FileObject, path: String, query: FolderPageQuery) async throws -> String {
        let page = try await FolderPage.read(provider, path: path, query: query, includes: publicShare ? Self.isPlain : { _ in true })
        let extended = provider as? any ExtendedFileProvider
        let rows: [[String: Any]] = page.items.map { item in
            let isFolder = FolderPage.isFolder(item)
            let href = paths.href(for: item.path, isFolder: isFolder)
            var row: [String: Any] = ["name": item.name, "href": href, "kind": isFolder ? "folder" : "file",
                                      "icon": isFolder ? "folder" : Self.icon(for: item.name)]
            row["bytes"] = isFolder ? "" : item.size.map { String($0) } ?? ""
            row["sizeText"] = isFolder ? "—" : item.size.map(Self.bytes) ?? "—"
            if let date = item.modificationDate {
                row["iso"] = ServeText.iso8601(date)
                row["dateText"] = ServeText.readableDate(date)
            }
            if item.type == .file, let extended, extended.thumbnailAvailable(path: item.path) { row["thumb"] = href + "?thumbnail=256" }
            return row
        }
        let sorts: [[String: Any]] = FolderPageQuery.Sort.allCases.map { sort in
            let current = sort == query.sort
            let descending = current ? !query.descending : sort != .name
            var entry: [String: Any] = ["key": sort.rawValue, "label": Self.label(sort), "current": current,
                                        "href": query.string(sort: sort, descending: descending)]
            if current {
                entry["arrow"] = query.descending ? "<span aria-hidden=\"true\"> ▼</span>" : "<span aria-hidden=\"true\"> ▲</span>"
                entry["ariaSort"] = query.descending ? "descending" : "ascending"
            }
            return entry
        }
        let views: [[String: Any]] = [FolderPageQuery.View.list, .gallery].map { view in
            ["label": view == .list ? "List" : "Gallery", "current": view == query.view, "href": query.string(view: view)]
        }
        let (title, subtitle) = heading(for: folder, path: path)
        let first = page.total == 0 ? 0 : page.before + 1
        let last = page.before + page.items.count
        var count = "\(Self.grouped(page.total)) item\(page.total == 1 ? "" : "s")"
        if page.total > page.items.count { count += " · showing \(Self.grouped(first))–\(Self.grouped(last))" }
        var context: [String: Any] = [
            "title": title, "icon": "folder", "rows": rows, "sorts": sorts, "views": views, "count": count,
            "gallery": query.view == .gallery, "sortLabel": Self.label(query.sort).lowercased(),
        ]
        if let subtitle { context["subtitle"] = subtitle }
        let crumbs = crumbs(to: path)
        context["crumbs"] = crumbs
        context["hasCrumbs"] = !crumbs.isEmpty
        if zipLimit != nil, page.total > 0 {
            context["download"] = ["href": "?download=zip", "label": "Download all (ZIP)", "all": true] as [String: Any]
        }
        if page.before > 0, let firstItem = page.items.first {
            context["prev"] = query.string(slice: .before(FolderSortKey(firstItem, sort: query.sort)))
        }
        if page.hasNext, let lastItem = page.items.last {
            context["next"] = query.string(slice: .after(FolderSortKey(lastItem, sort: query.sort)))
        }
        context["pageTitle"] = subtitle == nil ? title : "\(title) — \(self.title)"
        return SharePageTemplates.render("folder", context)
    }

    func filePage(_ file: FileObject, path: String) async throws -> String {
        let href = paths.href(for: path, isFolder: false)
        var facts: [[String: String]] = []
        func fact(_ label: String, _ value: String?) {
            if let value, !value.isEmpty { facts.append(["label": label, "value": value]) }
        }
        fact("Size", file.size.map { "\(Self.bytes($0)) (\(Self.grouped(Int($0))) bytes)" })
        fact("Modified", file.modificationDate.map(ServeText.readableDate))
        var context: [String: Any] = ["icon": Self.icon(for: file.name)]
        if let extended = provider as? any ExtendedFileProvider {
            if file.type == .file, extended.thumbnailAvailable(path: path) { context["preview"] = href + "?thumbnail=\(Self.largestThumbnail)" }
            do {
                let metadata = try await extended.metadata(of: file)
                if let width = metadata.width, let height = metadata.height { fact("Dimensions", "\(width) × \(height) pixels") }
                fact("Pages", metadata.pages.map(String.init))
                fact("Duration", metadata.durationSeconds.map(Self.duration))
                fact("Codecs", [metadata.other["video_codec"], metadata.other["audio_codec"]].compactMap { $0 }.joined(separator: ", "))
                let camera = [metadata.cameraMake, metadata.cameraModel].compactMap { $0 }.joined(separator: " ")
                fact("Camera", camera)
                fact("Taken", metadata.dateTaken.map(ServeText.readableLocalTime))
                fact("Title", metadata.title)
                fact("Artist", metadata.artist)
                fact("Album", metadata.album)
                fact("Author", metadata.author)
                fact("Format", metadata.format)
            } catch {
                logger.debug("no metadata for the file page: \(ErrorMessage.reason(for: error))")
            }
        }
        fact("Type", file.contentType)
        let (title, subtitle) = heading(for: file, path: path)
        context["title"] = title
        context["pageTitle"] = subtitle == nil ? title : "\(title) — \(self.title)"
        if let subtitle { context["subtitle"] = subtitle }
        context["facts"] = facts
        let crumbs = crumbs(to: path)
        context["crumbs"] = crumbs
        context["hasCrumbs"] = !crumbs.isEmpty
        context["download"] = ["href": href + "?download", "label": "Download" + (file.size.map { " (\(Self.bytes($0)))" } ?? ""),
                               "all": false] as [String: Any]
        return SharePageTemplates.render("file", context)
    }

    // MARK: - Previews

    func thumbnail(of item: FileObject, size text: String, head: Bool) async throws -> Response {
        guard let size = Int(text), Self.thumbnailSizes.contains(size) else {
            return WebDAVHandler.plain(.badRequest, "thumbnail takes one of the sizes " + Self.thumbnailSizes.map(String.init).joined(separator: ", "))
        }
        guard item.type == .file, let extended = provider as? any ExtendedFileProvider, extended.thumbnailAvailable(path: item.path) else {
            return WebDAVHandler.plain(.notFound, "no preview for this file")
        }
        let format: ThumbnailOptions.Format = ["jpg", "jpeg", "jpe", "jfif"].contains(MediaType.fileExtension(of: item.name)) ? .jpeg : .png
        let version = "\(item.size ?? -1) \(item.modificationDate?.timeIntervalSince1970 ?? 0) \(item.versionTag ?? "")"
        let key = [cacheScope, item.path, version, String(size), format.rawValue].joined(separator: "\n")
        let path = item.path
        let make: @Sendable () async throws -> Data? = {
            try await extended.thumbnail(of: path, options: ThumbnailOptions(maxDimension: size, format: format))?.data
        }
        let data: Data?
        do {
            if let thumbnails {
                data = try await thumbnails.thumbnail(for: key, make: make)
            } else {
                data = try await make()
            }
        } catch is ThumbnailCache.Busy {
            var headers = HTTPFields()
            headers[.retryAfter] = "5"
            return WebDAVHandler.plain(.serviceUnavailable, "too many previews are being made; try again shortly", headers: headers)
        } catch let error as CocoaError where error.code == .fileReadCorruptFile || error.code == .fileReadTooLarge {
            logger.info("no preview of \(item.name): \(ErrorMessage.reason(for: error))")
            return WebDAVHandler.plain(.unsupportedMediaType, "no preview can be made of this file")
        }
        guard let data else { return WebDAVHandler.plain(.notFound, "no preview for this file") }
        var headers = HTTPFields()
        headers[.contentType] = format == .jpeg ? "image/jpeg" : "image/png"
        // Short: a revoked link's previews should not outlive it for long in a browser's cache.
        headers[.cacheControl] = "private, max-age=600"
        headers[.contentLength] = String(data.count)
        return Response(status: .ok, headers: headers, body: head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: - Download all

    /// The folder as a ZIP, streamed: stored entries under the folder's name, ZIP64 where needed,
    /// refused (413) above ``zipLimit``. A file that cannot be read ends the response early, so
    /// the browser reports a failed download instead of keeping a short archive.
    func zip(_ folder: FileObject, path: String, head: Bool) async throws -> Response {
        guard let zipLimit else {
            return Self.message(.notFound, icon: "archive", title: "Downloads of whole folders are turned off",
                                text: "Open the folder and download its files one by one.", pageTitle: folder.name, head: head)
        }
        guard let reader = provider as? any FileProviderReadWrite else { return WebDAVHandler.plain(.notImplemented, "this remote cannot be read") }
        let name = ZipStream.entryName(path == paths.root ? title : folder.name)
        var headers = HTTPFields()
        headers[.contentType] = "application/zip"
        headers[.contentDisposition] = Self.attachment(name + ".zip")
        if head { return Response(status: .ok, headers: headers, body: ResponseBody()) }
        // The whole tree first: what is over the limit is refused before a byte is sent. The
        // provider's own walk (one request for a whole S3 prefix or a WebDAV Depth: infinity).
        var total: Int64 = 0, entries = 0
        do {
            for try await entry in provider.walk(path: path, pageSize: 1000) where Self.isPlain(entry) {
                entries += 1
                if !entry.isDirectory { total = total.saturatingAdding(max(0, entry.size ?? 0)) }
                if total > zipLimit || entries > Self.maximumZipEntries {
                    return Self.message(.contentTooLarge, icon: "archive", title: "This folder is too large to download at once",
                                        text: "The limit for one download is \(Self.bytes(zipLimit)) and \(Self.grouped(Self.maximumZipEntries)) items. "
                                            + "Open the folder and download its files or subfolders one by one.",
                                        pageTitle: name)
                }
            }
        } catch {
            logger.error("download of \(name).zip refused: \(ErrorMessage.reason(for: error))")
            return Self.message(.internalServerError, icon: "invalid", title: "This folder cannot be downloaded now",
                                text: "Part of it could not be read. Try again later, or download its files one by one.", pageTitle: name)
        }
        let provider = self.provider, logger = self.logger
        let body = ResponseBody { writer in
            var zip = try ZipStream()
            defer { zip.close() }
            var sent: Int64 = 0
            do {
                // Plain files and folders only: a symbolic link could lead out of the folder (or
                // loop), a named pipe would never end. The walk gives parents before children.
                for try await entry in provider.walk(path: path, pageSize: 1000) where Self.isPlain(entry) {
                    guard let relative = RemotePath.relative(entry.path, to: path), !relative.isEmpty else { continue }
                    let entryName = name + "/" + relative.split(separator: "/").map { ZipStream.entryName(String($0)) }.joined(separator: "/")
                    if entry.isDirectory {
                        try await writer.write(ByteBuffer(bytes: try zip.folder(entryName + "/", modified: entry.modificationDate)))
                    } else {
                        try await writer.write(ByteBuffer(bytes: try zip.file(entryName, modified: entry.modificationDate, expectedSize: entry.size)))
                        var options = ReadOptions(chunkSize: WebDAVHandler.responseChunk)
                        options.bufferSize = 1 << 20
                        for try await chunk in try await reader.readStream(path: entry.path, options: options) {
                            sent = sent.saturatingAdding(Int64(chunk.count))
                            // Files that grew since the walk do not take the download past its limit.
                            guard sent <= zipLimit else { throw ZipStream.Failure.limit(zipLimit) }
                            try zip.data(chunk)
                            try await writer.write(ByteBuffer(bytes: chunk))
                        }
                        try await writer.write(ByteBuffer(bytes: try zip.endFile()))
                    }
                    guard zip.count <= UInt64(Self.maximumZipEntries) else { throw ZipStream.Failure.limit(zipLimit) }
                }
                try await zip.finish { try await writer.write(ByteBuffer(bytes: $0)) }
                try await writer.finish(nil)
            } catch let error as ChannelError {
                // The browser went away (cancelled, closed): nothing is wrong here.
                logger.info("download of \(name).zip ended by the client after \(zip.offset) bytes: \(error)")
                throw error
            } catch {
                logger.error("download of \(name).zip stopped after \(zip.offset) bytes: \(ErrorMessage.reason(for: error))")
                throw error
            }
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    // MARK: - Text

    /// `Content-Disposition: attachment` with the name in ASCII and in UTF-8 (RFC 6266).
    static func attachment(_ name: String) -> String {
        let ascii = String(String.UnicodeScalarView(name.unicodeScalars.map { scalar in
            scalar.isASCII && scalar.value >= 0x20 && scalar != "\"" && scalar != "\\" && scalar.value != 0x7F ? scalar : "_"
        }))
        let encoded = name.addingPercentEncoding(withAllowedCharacters: FolderPageQuery.valueCharacters) ?? ""
        return "attachment; filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
    }

    /// `812 B`, `1.2 MB`, `3.4 GB` (decimal units, as file managers show them).
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(count) B" }
        return value < 10 ? String(format: "%.1f %@", value, units[unit]) : String(format: "%.0f %@", value, units[unit])
    }

    /// `1,003`.
    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value.magnitude))
        var out = value < 0 ? "-" : ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return out
    }

    /// `3:07` or `1:02:03`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 1e9 else { return "" }
        let whole = Int(seconds.rounded())
        let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }

    static func label(_ sort: FolderPageQuery.Sort) -> String {
        switch sort {
        case .name: "Name"
        case .size: "Size"
        case .date: "Modified"
        }
    }

    /// The icon of a file, by its name.
    static func icon(for name: String) -> String {
        let ext = MediaType.fileExtension(of: name)
        switch MediaType(path: name) {
        case .image: return "image"
        case .pdf: return "document"
        case .audio: return "audio"
        case .video: return "video"
        case .other: break
        }
        if ["zip", "tar", "gz", "tgz", "bz2", "xz", "7z", "rar", "zst"].contains(ext) { return "archive" }
        if ["txt", "md", "doc", "docx", "odt", "rtf", "csv", "xls", "xlsx", "ods", "ppt", "pptx", "odp"].contains(ext) { return "document" }
        return "file"
    }
}
