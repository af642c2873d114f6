import CCurl
import Foundation
import GatewayCore
import Synchronization

/// The state of one running transfer, shared between the async caller and libcurl's thread; libcurl's
/// callbacks reach it through an unmanaged context pointer. Used by HTTP and FTP alike.
final class CurlTransfer: @unchecked Sendable {
    /// What libcurl's header callback carries.
    enum HeaderMode {
        /// HTTP header blocks: parsed into a dictionary (a status line starts a new block).
        case http
        /// FTP server replies: kept as lines (the most recent ``maxReplyLines``).
        case ftp
    }

    /// Turns a failed transfer's libcurl code into the error callers see; `nil` uses the default
    /// `URLError` mapping.
    typealias FailureMapper = @Sendable (CURLcode, CurlTransfer) -> (any Error)?

    let easy: CurlEasy
    let path: String
    let remote: String
    let download: DownloadChannel
    let upload: UploadChannel?
    let mode: HeaderMode
    let mapFailure: FailureMapper?
    static let maxReplyLines = 512

    private struct State {
        var headers: [String: String] = [:]
        /// The bytes of `headers` (``maxHeaderBytes``), and whether a head went past them.
        var headerBytes = 0
        var headersTooLarge = false
        var replyLines: [String] = []
        /// The head's hand-off to the caller (``HeadStateMachine``).
        var head = HeadStateMachine()
    }

    private let state = Mutex(State())
    /// When the head goes out as the body arrives (``BodyStateMachine``); touched only on
    /// libcurl's thread.
    private var body = BodyStateMachine(smallBody: CurlTransfer.smallBody)
    /// An HTTP body announced at up to this many bytes is delivered with its head at the end of the
    /// transfer: the caller is resumed once, not once for the head and again for the body.
    static let smallBody = 64 << 10
    /// The most bytes of header names and values one response head may have (a `100 Continue` or
    /// a redirect starts a new head). A server that sends more fails the request with a clear
    /// error: no header is dropped unseen, since a lost `Content-Range` or `ETag` would change what
    /// a response means. (libcurl's own bound, 300 KiB, lies above.)
    static let maxHeaderBytes = 256 << 10
    /// A collected body (``collectBody(upTo:)``): gathered here instead of passing through the
    /// download channel, up to `collectLimit` bytes; the rest is dropped.
    private var collected = Data()
    private var collectLimit: Int?
    /// Set when the caller asked to stop; checked by the progress callback on curl's thread.
    private let abortFlag = Atomic<Bool>(false)
    /// The idle rule: a transfer that moves no byte for this long is stopped by the progress
    /// callback and fails with a time-out (``TransferTimeouts/idle``).
    var idleLimit: Duration?
    /// Bytes moved (down and up) at the last progress call that saw a change, and when; touched
    /// only on libcurl's thread.
    private var lastMoved: Int64 = -1
    private var lastMovedAt = ContinuousClock.now
    /// Set when the idle rule stopped the transfer.
    private let idleFlag = Atomic<Bool>(false)
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// FTP: commands sent after login before this transfer's own (`CURLOPT_QUOTE`), and their list.
    var quotePrefix: [String] = []
    var quoteList: UnsafeMutablePointer<curl_slist>?
    /// FTP: commands sent after a successful transfer (`CURLOPT_POSTQUOTE`).
    var postQuoteList: UnsafeMutablePointer<curl_slist>?
    /// FTP: whether this transfer carries the per-connection set-up (`OPTS UTF8 ON`).
    var sendsSessionSetup = false

    init(easy: CurlEasy, path: String, remote: String, download: DownloadChannel, upload: UploadChannel?,
         mode: HeaderMode = .http, mapFailure: FailureMapper? = nil) {
        self.easy = easy
        self.path = path
        self.remote = remote
        self.download = download
        self.upload = upload
        self.mode = mode
        self.mapFailure = mapFailure
    }

    /// The FTP server's reply lines so far (``HeaderMode/ftp``).
    var replyLines: [String] { state.withLock { $0.replyLines } }

    /// Runs the transfer on one of `threads` (never on the Swift concurrency pool), then gives
    /// the handle back to `pool` and completes the transfer. `finished` runs on that thread first.
    ///
    /// The handle goes back before the caller resumes, so a caller's next request finds it (and its
    /// open connection) idle instead of opening another connection while this one is on its way back.
    func start(on threads: BlockingIOExecutor, releasingTo pool: HandlePool, polling: Bool = false,
               reusable: @escaping @Sendable (CURLcode) -> Bool, finished: (@Sendable (CURLcode) -> Void)? = nil) {
        threads.run { [self] in
            perform(releasingTo: pool, polling: polling, reusable: reusable, finished: finished)
        }
    }

    /// Runs the transfer on the calling thread, which must be a ``BlockingIOExecutor``'s, and
    /// returns when it ended (cancelling the calling task aborts it). Only for a transfer that
    /// needs nothing from its caller while it runs: a body collected with ``collectBody(upTo:)``,
    /// and no upload that the caller would have to feed.
    func run(releasingTo pool: HandlePool, polling: Bool = false,
             reusable: @escaping @Sendable (CURLcode) -> Bool, finished: (@Sendable (CURLcode) -> Void)? = nil) async {
        precondition(collectLimit != nil && BlockingIOExecutor.isCurrentThread, "an inline transfer collects its body on a blocking thread")
        await withTaskCancellationHandler {
            perform(releasingTo: pool, polling: polling, reusable: reusable, finished: finished)
        } onCancel: {
            abort()
        }
    }

    private func perform(releasingTo pool: HandlePool, polling: Bool, reusable: (CURLcode) -> Bool, finished: ((CURLcode) -> Void)?) {
        let code = polling ? easy.performPolling() : easy.perform()
        finished?(code)
        let result = outcome(of: code)
        pool.release(easy, reusable: reusable(code))
        complete(result)
    }

    /// Gathers the body in memory, up to `limit` bytes (the rest is dropped), instead of streaming
    /// it: for small answers read only once the transfer ended. The head is then delivered at the
    /// end, with the transfer's outcome.
    func collectBody(upTo limit: Int) {
        collectLimit = limit
    }

    /// The collected body, once the transfer ended.
    var collectedBody: Data { collected }

    deinit {
        if let headerList { curl_slist_free_all(headerList) }
        if let quoteList { curl_slist_free_all(quoteList) }
        if let postQuoteList { curl_slist_free_all(postQuoteList) }
    }

    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ pointer: UnsafeMutableRawPointer?) -> CurlTransfer {
        Unmanaged<CurlTransfer>.fromOpaque(pointer!).takeUnretainedValue()
    }

    // MARK: Caller side

    /// Waits until the response's status and headers are known.
    func waitForHead() async throws -> HTTPResponseHead {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponseHead, any Error>) in
                if case .resume(let ready) = state.withLock({ $0.head.waiterArrived(continuation) }) {
                    continuation.resume(with: ready)
                }
            }
        } onCancel: {
            abort()
        }
    }

    /// Stops the transfer at libcurl's next progress check.
    func abort() { abortFlag.store(true, ordering: .relaxed) }

    var isAborted: Bool { abortFlag.load(ordering: .relaxed) }

    /// Whether the idle rule stops the transfer now: called by the progress callback with the bytes
    /// moved so far; marks the transfer as timed out when it does.
    func isIdle(moved: Int64) -> Bool {
        let now = ContinuousClock.now
        if moved != lastMoved {
            lastMoved = moved
            lastMovedAt = now
            return false
        }
        guard let idleLimit, now - lastMovedAt >= idleLimit else { return false }
        idleFlag.store(true, ordering: .relaxed)
        return true
    }

    // MARK: curl thread side

    private func deliverHead(_ result: Result<HTTPResponseHead, any Error>) {
        if case .resume(let waiter, let result) = state.withLock({ $0.head.headArrived(result) }) {
            waiter.resume(with: result)
        }
    }

    private func currentHead() -> HTTPResponseHead {
        let version: String
        switch easy.info(CURLINFO_HTTP_VERSION) {
        case Int(CURL_HTTP_VERSION_1_0): version = "1.0"
        case Int(CURL_HTTP_VERSION_2_0): version = "2"
        case Int(CURL_HTTP_VERSION_3): version = "3"
        default: version = "1.1"
        }
        return HTTPResponseHead(status: easy.info(CURLINFO_RESPONSE_CODE), headers: state.withLock { $0.headers }, httpVersion: version)
    }

    /// A header line arrived (status lines start a new header block).
    ///
    /// Taken apart as bytes (a header's name is ASCII; its value is decoded with repair): turned
    /// into `String`s and trimmed by Foundation, a response's eight header lines cost a twentieth
    /// of a small-file upload's CPU time.
    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        if mode == .ftp {
            // Trimmed by scalars: "\r\n" is one Character, so a Character-wise trim left it on every line
            // (and FEAT's argument-less names, "MFMT\r\n", "UTF8\r\n", went unrecognised).
            var scalars = Substring(String(decoding: line, as: UTF8.self)).unicodeScalars
            while let last = scalars.last, last == "\r" || last == "\n" { scalars.removeLast() }
            let text = String(scalars)
            state.withLock { state in
                if state.replyLines.count >= Self.maxReplyLines { state.replyLines.removeFirst(state.replyLines.count / 2) }
                state.replyLines.append(text)
            }
            return true
        }
        switch Self.headerLine(line) {
        case .status:
            state.withLock {
                $0.headers = [:]
                $0.headerBytes = 0
            }
        case .other:
            break
        case .field(let name, let value):
            return state.withLock { state in
                if Self.add(name: name, value: value, to: &state.headers, bytes: &state.headerBytes) { return true }
                state.headersTooLarge = true
                return false
            }
        }
        return true
    }

    /// Adds a field to a response's headers, counting its bytes in `bytes`; `false`, adding
    /// nothing, once the head would pass ``maxHeaderBytes``. A repeated field is one list
    /// (RFC 9110 §5.3: `DAV: 1,2` and `DAV: <...>`), appended to in place.
    static func add(name: String, value: String, to headers: inout [String: String], bytes: inout Int) -> Bool {
        let index = headers.index(forKey: name)
        let added = index == nil ? name.utf8.count + value.utf8.count : value.utf8.count + 2
        guard added <= maxHeaderBytes - bytes else { return false }
        bytes += added
        if let index {
            headers.values[index].append(", ")
            headers.values[index].append(value)
        } else {
            headers[name] = value
        }
        return true
    }

    /// Whether the response's head went past ``maxHeaderBytes`` (the transfer was stopped there).
    var headersTooLarge: Bool { state.withLock { $0.headersTooLarge } }

    /// What one HTTP header line is.
    enum HeaderLine: Equatable {
        /// A status line (`HTTP/1.1 200 OK`): a new header block starts.
        case status
        /// A field: its name in lower case, its value without spaces, tabs, CR and LF at either end.
        case field(name: String, value: String)
        /// Anything else (the empty line ending the block).
        case other
    }

    /// Takes a header line apart.
    static func headerLine(_ line: UnsafeRawBufferPointer) -> HeaderLine {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        var start = line.startIndex
        var end = line.endIndex
        while start < end, isSpace(line[start]) { start += 1 }
        while end > start, isSpace(line[end - 1]) { end -= 1 }
        if end - start >= 5, line[start..<start + 5].elementsEqual("HTTP/".utf8) { return .status }
        guard let colon = line[start..<end].firstIndex(of: 0x3A) else { return .other }
        var valueStart = colon + 1
        while valueStart < end, isSpace(line[valueStart]) { valueStart += 1 }
        // A field's name is ASCII (RFC 9110 §5.1); its value is decoded with repair.
        return .field(name: String(decoding: line[start..<colon].lazy.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self),
                      value: String(decoding: line[valueStart..<end], as: UTF8.self))
    }

    /// Body bytes arrived. Returns `false` to make libcurl abort (the consumer is gone).
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if let collectLimit {
            if collected.count < collectLimit { collected.append(contentsOf: bytes.prefix(collectLimit - collected.count)) }
            return !isAborted
        }
        var head: HTTPResponseHead?
        let action = body.bytesArrived(bytes.count) {
            guard mode == .http else { return false }
            head = currentHead()
            return head!.contentLength.map { $0 <= Self.smallBody } ?? false
        }
        if action == .deliverHead { deliverHead(.success(head ?? currentHead())) }
        if isAborted { return false }
        return download.push(bytes)
    }

    /// What the ended transfer amounts to: its response head, or the error callers see. Reads the
    /// handle, so it runs before the handle goes back to the pool.
    func outcome(of code: CURLcode) -> Result<HTTPResponseHead, any Error> {
        if code == CURLE_OK { return .success(currentHead()) }
        if let streamError = upload?.streamError { return .failure(streamError) }
        if code == CURLE_ABORTED_BY_CALLBACK, idleFlag.load(ordering: .relaxed), let idleLimit {
            return .failure(URLError(.timedOut, userInfo: [
                NSLocalizedDescriptionKey: "no data moved for \(TransferTimeouts.seconds(idleLimit)) s (idle_timeout)",
                NSFilePathErrorKey: path, GatewayRemoteNameErrorKey: remote,
            ]))
        }
        if code == CURLE_WRITE_ERROR, headersTooLarge {
            return .failure(FileProviderError.malformedResponse(
                path: path, detail: "the server sent more than \(Self.maxHeaderBytes >> 10) KiB of response headers"))
        }
        if code == CURLE_ABORTED_BY_CALLBACK || code == CURLE_WRITE_ERROR && isAborted { return .failure(CancellationError()) }
        if let mapped = mapFailure?(code, self) { return .failure(mapped) }
        return .failure(code.urlError(path: path, remote: remote))
    }

    /// The transfer ended: resumes the caller and finishes the body. No use of the handle here.
    func complete(_ outcome: Result<HTTPResponseHead, any Error>) {
        upload?.close()
        if case .failure(let error) = outcome { download.finish(error) } else { download.finish(nil) }
        // After the body's end: a caller resumed only now finds the whole (small) body waiting.
        deliverHead(outcome)
    }
}

extension CurlTransfer {
    /// The response body as a stream; dropping it aborts an unfinished transfer.
    func bodyStream(expectedLength: Int64?) -> ByteStream {
        let reader = BodyReader(transfer: self)
        return ByteStream(expectedLength: expectedLength) { try await reader.next() }
    }
}

/// The consumer end of a response body. Dropping it (the stream is released) aborts an
/// unfinished transfer, so the connection is not left waiting; cancelling the reading task does too.
final class BodyReader: Sendable {
    let transfer: CurlTransfer

    init(transfer: CurlTransfer) { self.transfer = transfer }

    func next() async throws -> Data? {
        let transfer = self.transfer
        return try await withTaskCancellationHandler {
            try await transfer.download.next()
        } onCancel: {
            transfer.abort()
            transfer.download.finish(CancellationError())
        }
    }

    deinit {
        transfer.abort()
        transfer.download.abandon()
    }
}

// MARK: - C callbacks (no captures: the transfer comes through the context pointer)

let curlWriteCallback: gw_curl_data_callback = { buffer, size, count, context in
    let transfer = CurlTransfer.from(context)
    let total = size * count
    guard total > 0, let buffer else { return 0 }
    return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: total)) ? total : 0
}

let curlHeaderCallback: gw_curl_data_callback = { buffer, size, count, context in
    let transfer = CurlTransfer.from(context)
    let total = size * count
    guard let buffer else { return total }
    // (Anything but `total` stops the transfer: CURLE_WRITE_ERROR.)
    return transfer.receiveHeader(UnsafeRawBufferPointer(start: buffer, count: total)) ? total : 0
}

let curlReadCallback: gw_curl_data_callback = { buffer, size, count, context in
    let transfer = CurlTransfer.from(context)
    guard let buffer, let upload = transfer.upload else { return 0 }
    if transfer.isAborted { return Int(CURL_READFUNC_ABORT) }
    guard let read = upload.read(into: UnsafeMutableRawPointer(buffer), capacity: size * count) else {
        return Int(CURL_READFUNC_ABORT)
    }
    return read
}

let curlSeekCallback: gw_curl_seek_callback = { context, offset, origin in
    let transfer = CurlTransfer.from(context)
    // libcurl only ever asks to go back to the start (SEEK_SET 0) to resend a body.
    guard offset == 0, origin == SEEK_SET, let upload = transfer.upload, upload.rewind() else {
        return Int32(CURL_SEEKFUNC_CANTSEEK)
    }
    return Int32(CURL_SEEKFUNC_OK)
}

let curlProgressCallback: gw_curl_xferinfo_callback = { context, _, downloaded, _, uploaded in
    let transfer = CurlTransfer.from(context)
    if transfer.isAborted { return 1 }
    if transfer.isIdle(moved: Int64(downloaded).saturatingAdding(Int64(uploaded))) { return 1 }
    transfer.download.flushIfDue()
    return 0
}
