import CCurl
import Foundation
import GatewayCore
import Synchronization

/// The state of one running transfer, shared between the async caller and libcurl's thread; libcurl's
/// callbacks reach it through an unmanaged context pointer.
final class CurlTransfer: @unchecked Sendable {
    let easy: CurlEasy
    let path: String
    let remote: String
    let download: DownloadChannel
    let upload: UploadChannel?

    private struct State {
        var headers: [String: String] = [:]
        var headDelivered = false
        var headWaiter: CheckedContinuation<HTTPResponseHead, any Error>?
        var pendingHead: Result<HTTPResponseHead, any Error>?
        var aborted = false
    }

    private let state = Mutex(State())
    /// Set when the caller asked to stop; checked by the progress callback on curl's thread.
    private let abortFlag = Atomic<Bool>(false)
    var headerList: UnsafeMutablePointer<curl_slist>?

    init(easy: CurlEasy, path: String, remote: String, download: DownloadChannel, upload: UploadChannel?) {
        self.easy = easy
        self.path = path
        self.remote = remote
        self.download = download
        self.upload = upload
    }

    deinit { if let headerList { curl_slist_free_all(headerList) } }

    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ pointer: UnsafeMutableRawPointer?) -> CurlTransfer {
        Unmanaged<CurlTransfer>.fromOpaque(pointer!).takeUnretainedValue()
    }

    // MARK: Caller side

    /// Waits until the response's status and headers are known.
    func waitForHead() async throws -> HTTPResponseHead {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponseHead, any Error>) in
                let ready = state.withLock { state -> Result<HTTPResponseHead, any Error>? in
                    if let pending = state.pendingHead { return pending }
                    state.headWaiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            abort()
        }
    }

    /// Stops the transfer at libcurl's next progress check.
    func abort() { abortFlag.store(true, ordering: .relaxed) }

    var isAborted: Bool { abortFlag.load(ordering: .relaxed) }

    // MARK: curl thread side

    private func deliverHead(_ result: Result<HTTPResponseHead, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<HTTPResponseHead, any Error>? in
            guard !state.headDelivered else { return nil }
            state.headDelivered = true
            state.pendingHead = result
            let waiter = state.headWaiter
            state.headWaiter = nil
            return waiter
        }
        waiter?.resume(with: result)
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
    func receiveHeader(_ line: String) {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        state.withLock { state in
            if trimmed.hasPrefix("HTTP/") {
                state.headers = [:]
            } else if let colon = trimmed.firstIndex(of: ":") {
                let name = trimmed[..<colon].lowercased()
                let value = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                state.headers[name] = value
            }
        }
    }

    /// Body bytes arrived. Returns `false` to make libcurl abort (the consumer is gone).
    func receiveBody(_ data: Data) -> Bool {
        deliverHead(.success(currentHead()))
        if isAborted { return false }
        return download.push(data)
    }

    /// The transfer ended.
    func complete(_ code: CURLcode) {
        let error: (any Error)?
        if code == CURLE_OK {
            error = nil
        } else if let streamError = upload?.streamError {
            error = streamError
        } else if code == CURLE_ABORTED_BY_CALLBACK || code == CURLE_WRITE_ERROR && isAborted {
            error = CancellationError()
        } else {
            error = code.urlError(path: path, remote: remote)
        }
        if let error {
            deliverHead(.failure(error))
        } else {
            deliverHead(.success(currentHead()))
        }
        upload?.close()
        download.finish(error)
    }
}

// MARK: - C callbacks (no captures: the transfer comes through the context pointer)

let curlWriteCallback: gw_curl_data_callback = { buffer, size, count, context in
    let transfer = CurlTransfer.from(context)
    let total = size * count
    guard total > 0, let buffer else { return 0 }
    let data = Data(bytes: buffer, count: total)
    return transfer.receiveBody(data) ? total : 0
}

let curlHeaderCallback: gw_curl_data_callback = { buffer, size, count, context in
    let transfer = CurlTransfer.from(context)
    let total = size * count
    guard let buffer else { return total }
    let line = String(decoding: UnsafeRawBufferPointer(start: buffer, count: total), as: UTF8.self)
    transfer.receiveHeader(line)
    return total
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

let curlProgressCallback: gw_curl_xferinfo_callback = { context, _, _, _, _ in
    CurlTransfer.from(context).isAborted ? 1 : 0
}
