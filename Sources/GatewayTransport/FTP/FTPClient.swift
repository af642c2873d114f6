import CCurl
public import Foundation
public import GatewayCore
public import Logging
import Synchronization

/// An FTP/FTPS client on libcurl for one remote: a bounded pool of logged-in control connections
/// reused across operations (libcurl replaces one the server closed), passive mode by default, TLS
/// with session reuse on the data connections, streamed downloads, uploads and listings with
/// back-pressure, and stalls turned into time-outs.
///
/// Paths given to it are absolute paths on the server (``root()`` gives the remote's root); names
/// travel in ``FTPClientConfiguration/encoding``. Server refusals surface as
/// ``FileProviderFTPError`` (reply code, path, server text); transport failures as `URLError`.
public final class FTPClient: Sendable {
    /// What the server told us once per remote: where the remote lives and what the server offers.
    public struct Session: Sendable {
        /// The remote's root as an absolute server path (login folder + base path).
        public var root: String
        /// The server's FEAT answer.
        public var features: FTPFeatures
    }

    /// The configuration in use.
    public let configuration: FTPClientConfiguration
    private let pool: HandlePool
    private let logger: Logger
    /// Buffers that received bodies are gathered in (``DownloadChannel``), reused across transfers.
    private let bodyBuffers = ChunkBufferPool(size: 256 << 10, limit: 16)
    /// The threads transfers run on, reused from one request to the next (a caller already on a
    /// ``BlockingIOExecutor`` thread runs small requests itself).
    let threads = BlockingIOExecutor()
    private let session = Mutex<Session?>(nil)
    private let origin: String

    /// The default buffer of a transfer: bytes that may wait in memory for the reader or the network.
    public static let bufferCapacity = 4 << 20

    /// Creates a client. Nothing is sent until the first operation.
    public init(configuration: FTPClientConfiguration, logger: Logger) {
        self.configuration = configuration
        self.pool = HandlePool(limit: configuration.maxConnections)
        self.logger = logger
        SecretRedaction.register(configuration.password, user: configuration.user)
        var components = URLComponents()
        components.scheme = configuration.tls == .implicit ? "ftps" : "ftp"
        components.host = configuration.baseURL.host
        components.port = configuration.baseURL.port
        self.origin = components.string ?? "ftp://localhost"
        if configuration.insecureTLS {
            logger.warning("TLS certificate verification is disabled for this remote (insecure_tls)")
        }
    }

    // MARK: Session

    /// Logs in once (if not done yet), reads FEAT and the login folder, and checks the base folder.
    public func currentSession() async throws -> Session {
        if let known = session.withLock({ $0 }) { return known }
        let entry = Mutex<String?>(nil)
        let base = configuration.baseURL
        var baseURL = origin + (URLComponents(url: base, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? "/")
        if !baseURL.hasSuffix("/") { baseURL += "/" }
        // (This transfer enters the base folder: a missing one fails here, at login.)
        let (transfer, body) = try await start(url: baseURL, path: "/", command: "FEAT", entersFolder: true) { easy, transfer in
            try easy.set(CURLOPT_NOBODY, true)
            try transfer.setQuote(["*FEAT"], encoding: self.configuration.encoding)
        } finished: { easy, _ in
            entry.withLock { $0 = easy.info(string: CURLINFO_FTP_ENTRY_PATH) }
        }
        try await Self.drain(body)
        let replies = FTPReply.parse(transfer.replyLines)
        let features = replies.last(where: { $0.code == 211 && $0.lines.count > 1 }).map(FTPFeatures.init(featReply:)) ?? .none
        let root = Self.root(baseURL: base, entryPath: entry.withLock { $0 } ?? "/")
        let established = Session(root: root, features: features)
        logger.debug("ftp session", metadata: ["root": .string(root), "features": .string(features.names.sorted().joined(separator: ","))])
        session.withLock { $0 = established }
        return established
    }

    /// The session, if one was established already (no network traffic).
    public var knownSession: Session? { session.withLock { $0 } }

    /// The remote's root as an absolute server path.
    public func root() async throws -> String { try await currentSession().root }

    /// The remote's root: the base URL's path, relative to the login folder unless it starts with
    /// `//` or `%2F` (RFC 1738 and libcurl's convention for absolute paths).
    static func root(baseURL: URL, entryPath: String) -> String {
        let encoded = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        var rest = Substring(encoded)
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        let decoded = String(rest).removingPercentEncoding ?? String(rest)
        let joined = decoded.hasPrefix("/") ? decoded : (entryPath.hasSuffix("/") ? entryPath : entryPath + "/") + decoded
        var components: [Substring] = []
        for component in joined.split(separator: "/") where component != "." && !component.isEmpty {
            if component == ".." { _ = components.popLast() } else { components.append(component) }
        }
        return "/" + components.joined(separator: "/")
    }

    // MARK: Operations

    /// Sends commands on the control connection (`DELE`, `MKD`, `RNFR`/`RNTO`, `MLST`, `MFMT`...)
    /// and returns every reply seen. Commands name absolute paths; `directory` is the folder they
    /// are about (the connection does not enter it). A command prefixed with `*` may fail.
    public func execute(_ commands: [String], directory: String, path: String) async throws -> [FTPReply] {
        try await repeating(commands.allSatisfy(Self.isRepeatable)) {
            let (transfer, body) = try await start(url: url(directory, folder: true), path: path, command: commands.last,
                                                   repliesOnly: true) { easy, transfer in
                try easy.set(CURLOPT_NOBODY, true)
                try transfer.setQuote(commands, encoding: self.configuration.encoding)
            }
            try await Self.drain(body)
            return FTPReply.parse(transfer.replyLines)
        }
    }

    /// Lists a folder with `command` (`MLSD` or `LIST`) and streams the raw listing. `path` is the
    /// remote path errors name.
    public func list(directory: String, command: String, path: String) async throws -> ByteStream {
        try await repeating(true) {
            try await start(url: url(directory, folder: true), path: path, command: command, confirming: directory) { easy, _ in
                try easy.set(CURLOPT_CUSTOMREQUEST, command)
            }.1
        }
    }

    /// Streams the file at `serverPath` from `offset`, `length` bytes or to the end (REST + RETR).
    /// Errors about the file itself are thrown here, before the first byte; they name `path`.
    public func retrieve(_ serverPath: String, path: String, offset: Int64 = 0, length: Int64? = nil,
                         buffer: Int = FTPClient.bufferCapacity) async throws -> ByteStream {
        try await repeating(true) {
            try await start(url: url(serverPath, folder: false), path: path, command: "RETR", expectedLength: length, buffer: buffer) { easy, _ in
                // A range reaching past Int64.max (offset + length overflowing) reads to the end.
                if let length, max(length, 1) <= Int64.max - offset {
                    try easy.set(CURLOPT_RANGE, "\(offset)-\(offset + max(length, 1) - 1)")
                } else if offset > 0 {
                    try easy.set(CURLOPT_RESUME_FROM_LARGE, offset: offset)
                }
            }.1
        }
    }

    /// Uploads a stream to `serverPath` (STOR, or APPE when `append`), waiting until the server confirms.
    public func store(_ serverPath: String, path: String, from stream: ByteStream, append: Bool = false) async throws {
        let (_, body) = try await start(url: url(serverPath, folder: false), path: path, command: append ? "APPE" : "STOR", upload: stream) { easy, _ in
            if append { try easy.set(CURLOPT_APPEND, true) }
        }
        try await Self.drain(body)
    }

    /// Uploads bytes held in memory with STOR, sent again on a fresh connection (up to
    /// `requestAttempts` times) when the connection fails under it. Only for a name no one else
    /// writes (an atomic write's temporary file), where a second STOR cannot clobber anything.
    ///
    /// `commands` are sent on the same connection as soon as the server confirmed the upload
    /// (libcurl's post-quote), which saves a whole request per small file (the rename into place,
    /// `MFMT`). A refused command does not fail the call (nor close the connection): the replies to
    /// `commands` come back in order, for the caller to check; none when the upload failed.
    ///
    /// Only the first attempt carries `commands`: after a dropped connection the upload is sent
    /// again alone (the commands may have been carried out already, and `RNFR`/`RNTO` are not
    /// repeated blindly), and the caller, finding no replies, sends them itself.
    @discardableResult
    public func storeRepeatable(_ serverPath: String, path: String, contents: Data, then commands: [String] = []) async throws -> [FTPReply] {
        var first = true
        return try await repeating(true) {
            let then = first ? commands : []
            first = false
            let (transfer, body) = try await start(url: url(serverPath, folder: false), path: path, command: "STOR",
                                                   contents: contents) { _, transfer in
                if !then.isEmpty { try transfer.setPostQuote(then.map { "*" + $0 }, encoding: self.configuration.encoding) }
            }
            try await Self.drain(body)
            return Self.repliesAfterTransfer(FTPReply.parse(transfer.replyLines), count: then.count)
        }
    }

    /// The `count` replies that follow a data transfer's completion (`150`/`125`, then `226`/`250`):
    /// those to the post-quote commands; none when the replies do not have that shape.
    static func repliesAfterTransfer(_ replies: [FTPReply], count: Int) -> [FTPReply] {
        guard count > 0, let opened = replies.lastIndex(where: { $0.code == 150 || $0.code == 125 }),
              opened + 1 < replies.count, replies[opened + 1].code / 100 == 2 else { return [] }
        let following = replies[(opened + 2)...].prefix(count)
        return following.count == count ? Array(following) : []
    }

    /// Size and modification time of the file at `serverPath` from `SIZE` and `MDTM`; throws for
    /// folders and missing files (reply 550).
    public func fileInfo(_ serverPath: String, path: String) async throws -> (size: Int64?, modificationDate: Date?) {
        let info = Mutex<(Int64, Int64)>((-1, -1))
        try await repeating(true) {
            let (_, body) = try await start(url: url(serverPath, folder: false), path: path, command: "SIZE") { easy, _ in
                try easy.set(CURLOPT_NOBODY, true)
                try easy.set(CURLOPT_FILETIME, true)
            } finished: { easy, code in
                guard code == CURLE_OK else { return }
                info.withLock { $0 = (easy.info(offset: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T), easy.info(offset: CURLINFO_FILETIME_T)) }
            }
            try await Self.drain(body)
        }
        let (size, time) = info.withLock { $0 }
        return (size >= 0 ? size : nil, time >= 0 ? Date(timeIntervalSince1970: TimeInterval(time)) : nil)
    }

    /// Whether `serverPath` is a folder the server lets us enter (`CWD`, sent even when the pooled
    /// connection was last in that folder: see `start(confirming:)`).
    public func isDirectory(_ serverPath: String, path: String) async throws -> Bool {
        do {
            try await repeating(true) {
                let (_, body) = try await start(url: url(serverPath, folder: true), path: path, command: "CWD", confirming: serverPath) { easy, _ in
                    try easy.set(CURLOPT_NOBODY, true)
                }
                try await Self.drain(body)
            }
            return true
        } catch let error as FileProviderFTPError where error.replyCode >= 500 {
            return false
        }
    }

    // MARK: Transfers

    /// Waits for a transfer without a data connection (or an upload) to end. For `NOBODY`
    /// requests libcurl writes HTTP-style lines of its own (`Content-Length: 12`); they are dropped.
    static func drain(_ body: ByteStream) async throws {
        for try await _ in body {}
    }

    /// Commands that can be sent again after a dropped connection without changing the outcome.
    static func isRepeatable(_ command: String) -> Bool {
        let verb = command.drop(while: { $0 == "*" }).prefix(while: { $0 != " " }).uppercased()
        return ["FEAT", "MLST", "SIZE", "MDTM", "MFMT", "OPTS", "NOOP", "PWD", "STAT"].contains(verb)
    }

    /// Runs `body` again (up to `requestAttempts` times) when it fails on a connection problem and
    /// `repeatable` says that is safe.
    private func repeating<T>(_ repeatable: Bool, _ body: () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch where repeatable && attempt < configuration.requestAttempts && Self.isConnectionFailure(error) {
                logger.debug("ftp connection failed; retrying", metadata: ["attempt": .stringConvertible(attempt), "error": .string("\(error)")])
                try await Task.sleep(for: .milliseconds(50 * min(attempt, 20)))
                attempt += 1
            }
        }
    }

    /// A dropped or refused connection, or a server reply meaning "try again" (421, 425, 426).
    static func isConnectionFailure(_ error: any Error) -> Bool {
        if let ftp = error as? FileProviderFTPError { return [421, 425, 426].contains(ftp.replyCode) }
        if let url = error as? URLError { return url.code == .networkConnectionLost }
        return false
    }

    /// Starts a transfer and returns once it delivered its first byte or ended; the stream carries
    /// the data connection's bytes (empty for commands). `finished` runs on the transfer's thread
    /// before its handle goes back to the pool.
    ///
    /// `confirming` names the folder `url` points into when the answer depends on entering it
    /// (listings, "is this a folder?"): only those transfers, and the login's (`entersFolder`,
    /// which checks the base folder), `CWD` (libcurl's single-`CWD` method).
    /// Every other command names its file by its absolute path and leaves the connection's working
    /// folder alone (`NOCWD`): a relative name would be resolved in the folder the connection last
    /// entered, and when another client renamed that folder since, the server resolves it in the
    /// renamed one (a `SIZE` finds, a `STOR` writes, a file under the old name's new owner).
    /// libcurl skips the `CWD` when the connection's previous `CWD` transfer succeeded in the same
    /// folder, and a folder removed or renamed since would then list as empty (vsftpd), list the
    /// renamed folder, or pass for existing; in that one case a `CWD` is sent explicitly.
    ///
    /// `contents` is an upload held in memory, and `repliesOnly` marks a command whose answer is
    /// only its replies: neither has a body to stream back, and a caller on a ``BlockingIOExecutor``
    /// thread runs such a transfer right there, start to end (no hand-off, no wake-up).
    private func start(url: String, path: String, command: String?, expectedLength: Int64? = nil, buffer: Int = FTPClient.bufferCapacity,
                       upload stream: ByteStream? = nil, contents: Data? = nil, repliesOnly: Bool = false, confirming folder: String? = nil,
                       entersFolder: Bool = false, configure: (CurlEasy, CurlTransfer) throws -> Void,
                       finished: (@Sendable (CurlEasy, CURLcode) -> Void)? = nil) async throws -> (CurlTransfer, ByteStream) {
        let easy = try await pool.acquire()
        let download = DownloadChannel(capacity: buffer, pool: bodyBuffers)
        var upload: UploadChannel?
        if let contents {
            upload = UploadChannel(contents: contents)
        } else if let stream {
            let channel = UploadChannel(capacity: Self.bufferCapacity)
            upload = channel
            Task { await channel.pump(stream) }
        }
        let remote = configuration.remoteName
        let transfer = CurlTransfer(easy: easy, path: path, remote: remote, download: download, upload: upload, mode: .ftp) { code, transfer in
            Self.failure(code, replies: transfer.replyLines, path: path, command: command, remote: remote)
        }
        do {
            try configureCommon(easy, url: url, transfer: transfer, uploading: upload != nil,
                                length: contents.map { Int64($0.count) } ?? stream?.expectedLength, entersFolder: entersFolder || folder != nil)
            try configure(easy, transfer)
            if let folder, easy.ftpFolder == Self.folderPart(of: url) {
                try transfer.setQuote(["CWD \(folder)"], encoding: configuration.encoding)
            }
        } catch {
            upload?.close()
            pool.release(easy, reusable: false)
            throw error
        }
        let bodiless = (contents != nil || repliesOnly) && stream == nil
        if bodiless { transfer.collectBody(upTo: 0) }
        logger.debug("ftp request", metadata: ["command": .string(command ?? "?"), "path": .string(path)])
        let sentUTF8 = transfer.sendsSessionSetup
        let ended: @Sendable (CURLcode) -> Void = { code in
            if code == CURLE_OK, sentUTF8 {
                easy.needsSessionSetup = false
            } else if easy.info(CURLINFO_NUM_CONNECTS) > 0 {
                easy.needsSessionSetup = true  // a new connection: it has not been told yet
            }
            if easy.info(CURLINFO_NUM_CONNECTS) > 0 {
                self.logger.debug("ftp connected", metadata: ["path": .string(path)])
            }
            // What libcurl may now take the connection's working folder to be. After a CWD
            // transfer it remembers the folder after a success and after failures that keep the
            // connection (a file not found, say), and forgets it otherwise; assuming it always
            // remembers costs at most a spare CWD, never a skipped one. A NOCWD transfer keeps
            // what it remembered before.
            if entersFolder || folder != nil { easy.ftpFolder = Self.folderPart(of: url) }
            finished?(easy, code)
        }
        if bodiless && BlockingIOExecutor.isCurrentThread {
            await transfer.run(releasingTo: pool, polling: true, reusable: { Self.keepsConnection($0) }, finished: ended)
        } else {
            transfer.start(on: threads, releasingTo: pool, polling: true, reusable: { Self.keepsConnection($0) }, finished: ended)
        }
        do {
            _ = try await transfer.waitForHead()
        } catch {
            transfer.abort()
            download.abandon()
            throw error
        }
        return (transfer, bodiless ? ByteStream(data: Data()) : transfer.bodyStream(expectedLength: expectedLength))
    }

    /// Whether a handle stays in the pool after a transfer that ended with `code`. Server refusals
    /// leave the control connection usable; aborted or timed-out transfers drop it.
    static func keepsConnection(_ code: CURLcode) -> Bool {
        switch code {
        case CURLE_ABORTED_BY_CALLBACK, CURLE_WRITE_ERROR, CURLE_READ_ERROR, CURLE_OPERATION_TIMEDOUT, CURLE_SEND_ERROR,
             CURLE_RECV_ERROR, CURLE_SSL_CONNECT_ERROR, CURLE_FTP_WEIRD_PASV_REPLY, CURLE_FTP_WEIRD_227_FORMAT,
             CURLE_FTP_CANT_GET_HOST, CURLE_FTP_ACCEPT_FAILED, CURLE_FTP_ACCEPT_TIMEOUT, CURLE_WEIRD_SERVER_REPLY:
            return false
        default:
            return true
        }
    }

    private func configureCommon(_ easy: CurlEasy, url: String, transfer: CurlTransfer, uploading: Bool, length: Int64?,
                                 entersFolder: Bool) throws {
        let trust = configuration.tls == .none ? nil : CurlEasy.TLSTrust(caFile: configuration.caFile, insecure: configuration.insecureTLS)
        try easy.prepare(url: url, protocols: configuration.tls == .implicit ? "ftps" : "ftp", timeouts: configuration.timeouts,
                         tls: trust, transfer: transfer)
        try easy.set(CURLOPT_SERVER_RESPONSE_TIMEOUT, TransferTimeouts.seconds(configuration.timeouts.idle))
        // Absolute paths in commands; a CWD only where entering the folder is the question.
        try easy.set(CURLOPT_FTP_FILEMETHOD, Int((entersFolder ? CURLFTPMETHOD_SINGLECWD : CURLFTPMETHOD_NOCWD).rawValue))
        try easy.set(CURLOPT_FTP_USE_EPSV, configuration.passive)
        try easy.set(CURLOPT_FTP_SKIP_PASV_IP, configuration.skipPasvIP)
        if !configuration.passive { try easy.set(CURLOPT_FTPPORT, "-") }
        if configuration.tls == .explicit { try easy.set(CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue)) }
        if configuration.tls != .none {
            try easy.set(CURLOPT_SSL_SESSIONID_CACHE, true)
            // TLS 1.2 unless configured otherwise: with TLS 1.3, libcurl resumes each data
            // connection with a ticket the previous one already used, and servers that require
            // session reuse (vsftpd's require_ssl_reuse) refuse every other transfer (522).
            let cap = (configuration.tlsMaxVersion ?? .tls1_2) == .tls1_2 ? CurlTLS.max1_2 : CurlTLS.max1_3
            try easy.set(CURLOPT_SSLVERSION, CurlTLS.minimum1_2 | cap)
        }
        try easy.set(CURLOPT_USERNAME, configuration.user ?? "anonymous")
        try easy.set(CURLOPT_PASSWORD, configuration.user == nil ? "gateway@" : configuration.password ?? "")
        if uploading { try easy.attachUpload(transfer, length: length, seekable: false) }
        if easy.needsSessionSetup, configuration.encoding == .utf8, session.withLock({ $0?.features.utf8 }) == true {
            transfer.sendsSessionSetup = true
            transfer.quotePrefix = ["*OPTS UTF8 ON"]
            try transfer.setQuote([], encoding: configuration.encoding)
        }
    }

    // MARK: Paths

    /// The folder part of a transfer URL (up to its last `/`), as libcurl compares it to decide
    /// whether a `CWD` is needed.
    static func folderPart(of url: String) -> Substring {
        url[..<(url.lastIndex(of: "/").map(url.index(after:)) ?? url.endIndex)]
    }

    /// The URL of an absolute server path: every byte outside the unreserved set percent-encoded
    /// (so `;type=`, `?` and `#` in names are just names), and `//` after the host for an absolute path.
    func url(_ serverPath: String, folder: Bool) -> String {
        var result = origin + "/"
        let bytes = configuration.encoding == .utf8 ? Array(serverPath.utf8) : Array(serverPath.data(using: configuration.encoding, allowLossyConversion: false) ?? Data(serverPath.utf8))
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(bytes.count * 3)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        result += String(decoding: encoded, as: UTF8.self)
        if folder && !result.hasSuffix("/") { result += "/" }
        return result
    }

    // MARK: Errors

    /// libcurl results that mean the server refused a command (its reply says why).
    static let refusalCodes: Set<UInt32> = [
        CURLE_QUOTE_ERROR, CURLE_REMOTE_FILE_NOT_FOUND, CURLE_REMOTE_ACCESS_DENIED, CURLE_UPLOAD_FAILED,
        CURLE_REMOTE_DISK_FULL, CURLE_FTP_COULDNT_RETR_FILE, CURLE_LOGIN_DENIED, CURLE_FTP_COULDNT_USE_REST,
        CURLE_FTP_ACCEPT_FAILED, CURLE_FTP_WEIRD_PASV_REPLY, CURLE_FTP_WEIRD_227_FORMAT, CURLE_FTP_CANT_GET_HOST,
        CURLE_FTP_COULDNT_SET_TYPE, CURLE_PARTIAL_FILE, CURLE_FTP_PORT_FAILED, CURLE_FTP_PRET_FAILED,
        CURLE_REMOTE_FILE_EXISTS, CURLE_WEIRD_SERVER_REPLY, CURLE_RANGE_ERROR, CURLE_BAD_DOWNLOAD_RESUME,
    ].reduce(into: []) { $0.insert($1.rawValue) }

    /// The error for a failed transfer: the server's refusal as ``FileProviderFTPError`` when its
    /// last reply was one, a dropped connection for a data connection's failed TLS handshake, else
    /// `nil` (the caller falls back to a `URLError`).
    static func failure(_ code: CURLcode, replies lines: [String], path: String, command: String?, remote: String = "") -> (any Error)? {
        if code == CURLE_SSL_CONNECT_ERROR, FTPReply.parse(lines).contains(where: { [227, 229, 150, 125].contains($0.code) }) {
            // The control connection was up and its TLS fine; the data connection's handshake
            // failed. Servers that require each data connection to resume the control
            // connection's TLS session (vsftpd, ProFTPD) refuse one that does not, and a loaded
            // server can drop a handshake. A new connection logs in with a new session: worth
            // another attempt, like a dropped connection (seen with vsftpd under parallel tests).
            let error = code.urlError(path: path, remote: remote)
            return URLError(.networkConnectionLost, userInfo: error.userInfo.merging([
                NSLocalizedDescriptionKey: "TLS handshake on the data connection failed",
            ]) { _, new in new })
        }
        guard refusalCodes.contains(code.rawValue), let last = FTPReply.parse(lines).last, last.code >= 400 else { return nil }
        let verb = command.map { String($0.drop(while: { $0 == "*" }).prefix(while: { $0 != " " })) }
        return FileProviderFTPError(replyCode: last.code, command: verb, path: path, serverText: last.text)
    }
}

extension CurlTransfer {
    /// Sets `CURLOPT_QUOTE`: ``quotePrefix`` then `commands`, sent after login and before the
    /// transfer, in `encoding`. The list is owned by the transfer and freed with it.
    func setQuote(_ commands: [String], encoding: String.Encoding) throws {
        let list = Self.commandList(quotePrefix + commands, encoding: encoding)
        if let quoteList { curl_slist_free_all(quoteList) }
        quoteList = list
        try easy.set(CURLOPT_QUOTE, list: list)
    }

    /// Sets `CURLOPT_POSTQUOTE`: `commands`, sent after a successful transfer, in `encoding`.
    /// The list is owned by the transfer and freed with it.
    func setPostQuote(_ commands: [String], encoding: String.Encoding) throws {
        let list = Self.commandList(commands, encoding: encoding)
        if let postQuoteList { curl_slist_free_all(postQuoteList) }
        postQuoteList = list
        try easy.set(CURLOPT_POSTQUOTE, list: list)
    }

    private static func commandList(_ commands: [String], encoding: String.Encoding) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for command in commands {
            var bytes = (encoding == .utf8 ? Data(command.utf8) : command.data(using: encoding, allowLossyConversion: false)
                ?? Data(command.utf8)).map { CChar(bitPattern: $0) }
            bytes.append(0)
            list = bytes.withUnsafeBufferPointer { curl_slist_append(list, $0.baseAddress) }
        }
        return list
    }
}
