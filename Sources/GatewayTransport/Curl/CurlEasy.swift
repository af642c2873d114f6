import CCurl
import Foundation

/// One libcurl easy handle. Reused across requests (after ``reset()``) so that its live
/// connections, TLS sessions and DNS cache carry over: that is how connections are kept alive.
///
/// Not thread-safe: a handle is used by one transfer at a time, which ``HandlePool`` guarantees.
final class CurlEasy: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    /// FTP: the connection this handle keeps has not yet had its per-connection set-up
    /// (`OPTS UTF8 ON`). Set again when libcurl had to open a new connection.
    var needsSessionSetup = true
    /// FTP: the folder part of the last `CWD` transfer's URL: libcurl's connection may believe it is
    /// there and not send a `CWD` into it again (see `FTPClient.start`).
    var ftpFolder: Substring?

    /// libcurl's one-time global set-up, done before the first handle exists.
    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

    init() {
        _ = Self.globalInit
        guard let handle = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        self.handle = handle
    }

    /// The multi handle ``performPolling()`` drives this handle with, created on first use and
    /// kept (its connection cache holds the handle's open connections between transfers).
    private var multi: UnsafeMutableRawPointer?

    deinit {
        if let multi { curl_multi_cleanup(multi) }
        curl_easy_cleanup(handle)
    }

    /// Clears every option set for the previous request, keeping connections and caches.
    func reset() { curl_easy_reset(handle) }

    func set(_ option: CURLoption, _ value: Int) throws {
        try check(gw_curl_setopt_long(handle, option, value), option)
    }

    func set(_ option: CURLoption, _ value: Bool) throws {
        try check(gw_curl_setopt_long(handle, option, value ? 1 : 0), option)
    }

    func set(_ option: CURLoption, offset value: Int64) throws {
        try check(gw_curl_setopt_off(handle, option, curl_off_t(value)), option)
    }

    /// Sets a string option; libcurl copies strings, so the Swift string need not outlive the call.
    func set(_ option: CURLoption, _ value: String) throws {
        try check(value.withCString { gw_curl_setopt_string(handle, option, $0) }, option)
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws {
        try check(gw_curl_setopt_pointer(handle, option, value), option)
    }

    /// Sets a list option. The list must stay alive until the transfer ends (libcurl keeps the pointer).
    func set(_ option: CURLoption, list value: UnsafeMutablePointer<curl_slist>?) throws {
        try check(gw_curl_setopt_slist(handle, option, value), option)
    }

    func set(_ option: CURLoption, callback: gw_curl_data_callback) throws {
        try check(gw_curl_setopt_data_callback(handle, option, callback), option)
    }

    func setSeek(callback: gw_curl_seek_callback) throws {
        try check(gw_curl_setopt_seek_callback(handle, callback), CURLOPT_SEEKFUNCTION)
    }

    func setProgress(callback: gw_curl_xferinfo_callback) throws {
        try check(gw_curl_setopt_xferinfo_callback(handle, callback), CURLOPT_XFERINFOFUNCTION)
    }

    func info(_ info: CURLINFO) -> Int {
        var value = 0
        _ = gw_curl_getinfo_long(handle, info, &value)
        return value
    }

    func info(offset info: CURLINFO) -> Int64 {
        var value: curl_off_t = -1
        _ = gw_curl_getinfo_off(handle, info, &value)
        return Int64(value)
    }

    /// A string-valued info, e.g. `CURLINFO_FTP_ENTRY_PATH`; `nil` when libcurl has none.
    func info(string info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard gw_curl_getinfo_string(handle, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    /// Runs the transfer; blocks the calling thread until it ends.
    func perform() -> CURLcode { curl_easy_perform(handle) }

    /// Runs the transfer like ``perform()``, but waits for socket activity at most `interval` at a
    /// time. libcurl 7.88's `curl_easy_perform` can sleep a full second while an FTP data
    /// connection is still being set up (that socket is not in its wait set); with many transfers
    /// at once that stall hits often. Blocks the calling thread until the transfer ends.
    func performPolling(interval milliseconds: Int32 = 5) -> CURLcode {
        if multi == nil { multi = curl_multi_init() }
        guard let multi, curl_multi_add_handle(multi, handle) == CURLM_OK else { return curl_easy_perform(handle) }
        defer { curl_multi_remove_handle(multi, handle) }
        var running: Int32 = 1
        while running > 0 {
            guard curl_multi_perform(multi, &running) == CURLM_OK else { return CURLE_FAILED_INIT }
            if running > 0 { _ = curl_multi_poll(multi, nil, 0, milliseconds, nil) }
        }
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            if message.pointee.msg == CURLMSG_DONE { return message.pointee.data.result }
        }
        return CURLE_OK
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws {
        guard code == CURLE_OK else {
            throw CurlError(code: code, detail: "setting option \(option.rawValue)")
        }
    }
}

/// A libcurl failure before any response could be classified. Converted to `URLError` by
/// ``CurlError/urlError``.
struct CurlError: Error, CustomStringConvertible {
    let code: CURLcode
    let detail: String?

    var description: String {
        let text = String(cString: curl_easy_strerror(code))
        return detail.map { "\(text) (\($0))" } ?? text
    }
}
