import CCurl

/// What every transfer sets on its handle, HTTP or FTP alike: one place for the options both
/// protocols share, so each client only adds its own (HTTP: method, headers, credentials for the
/// configured origin; FTP: TLS mode, passive mode, quote commands).
///
/// A client's request goes through the same steps: take a handle from the pool, `reset` it,
/// ``CurlEasy/prepare(url:protocols:timeouts:tls:transfer:)``, the protocol's own options,
/// ``CurlEasy/attachUpload(_:length:seekable:)`` for a body to send, then run it as a
/// ``CurlTransfer`` on the client's threads.
extension CurlEasy {
    /// Certificate checks for a TLS connection.
    struct TLSTrust: Sendable, Equatable {
        /// A PEM file of CA certificates to trust instead of the system's.
        var caFile: String?
        /// Skip certificate and host name checks (testing only).
        var insecure = false
    }

    /// The send buffer of a body of unknown or large size.
    static let uploadBufferSize: Int64 = 512 * 1024

    /// Resets the handle and sets what every transfer has: the URL and the protocols it may use,
    /// no signals, TCP keep-alive, 256 KiB receive and 512 KiB send buffers, the time-out rules
    /// (with the idle rule on `transfer`), the certificate checks when `tls` is given, and the
    /// transfer's body, header and progress callbacks.
    ///
    /// `largeAnswer: false` (a request whose answer is a status and a few lines, as a `PUT`'s)
    /// keeps libcurl's 16 KiB receive buffer: libcurl allocates the buffer for each transfer and
    /// frees it at its end, and a quarter megabyte each time made glibc give pages back to the
    /// kernel (`madvise`) after every small request.
    func prepare(url: String, protocols: String, timeouts: TransferTimeouts, tls: TLSTrust?, transfer: CurlTransfer,
                 largeAnswer: Bool = true) throws {
        reset()
        try set(CURLOPT_URL, url)
        try set(CURLOPT_NOSIGNAL, true)
        try set(CURLOPT_PROTOCOLS_STR, protocols)
        try set(CURLOPT_TCP_KEEPALIVE, true)
        if largeAnswer { try set(CURLOPT_BUFFERSIZE, 256 * 1024) }
        try set(CURLOPT_UPLOAD_BUFFERSIZE, Int(Self.uploadBufferSize))
        try set(timeouts)
        transfer.idleLimit = timeouts.idle
        if let tls {
            if let caFile = tls.caFile { try set(CURLOPT_CAINFO, caFile) }
            if tls.insecure {
                try set(CURLOPT_SSL_VERIFYPEER, false)
                try set(CURLOPT_SSL_VERIFYHOST, 0)
            }
        }
        try set(CURLOPT_WRITEFUNCTION, callback: curlWriteCallback)
        try set(CURLOPT_WRITEDATA, pointer: transfer.context)
        try set(CURLOPT_HEADERFUNCTION, callback: curlHeaderCallback)
        try set(CURLOPT_HEADERDATA, pointer: transfer.context)
        try set(CURLOPT_NOPROGRESS, false)
        try setProgress(callback: curlProgressCallback)
        try set(CURLOPT_XFERINFODATA, pointer: transfer.context)
    }

    /// Sends a body pulled from `transfer`'s upload channel: `length` bytes when known, and
    /// rewound on libcurl's request (an authentication retry) when `seekable`.
    ///
    /// A body known to be smaller than the 512 KiB send buffer gets a buffer of its own size (at
    /// least libcurl's 16 KiB): libcurl allocates the buffer for each transfer and frees it at its
    /// end, and half a megabyte per small `PUT` made glibc give pages back to the kernel
    /// (`madvise`) after every request.
    func attachUpload(_ transfer: CurlTransfer, length: Int64?, seekable: Bool) throws {
        try set(CURLOPT_UPLOAD, true)
        if let length {
            try set(CURLOPT_INFILESIZE_LARGE, offset: length)
            if length < Self.uploadBufferSize { try set(CURLOPT_UPLOAD_BUFFERSIZE, Int(max(length, 16 * 1024))) }
        }
        try set(CURLOPT_READFUNCTION, callback: curlReadCallback)
        try set(CURLOPT_READDATA, pointer: transfer.context)
        if seekable {
            try setSeek(callback: curlSeekCallback)
            try set(CURLOPT_SEEKDATA, pointer: transfer.context)
        }
    }
}
