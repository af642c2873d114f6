/// How `gateway serve webdav` serves a remote.
public struct WebDAVServeOptions: Sendable {
    /// Address to listen on.
    public var host: String
    /// Port to listen on (0: any free port).
    public var port: Int
    /// A path prefix every URL starts with (`/dav`), or empty.
    public var basePath: String
    /// The user and password every request must present (Basic authentication); `nil` (and no
    /// ``htpasswdFile``) to serve without authentication.
    public var credentials: (user: String, password: String)?
    /// Refuse every method that changes something (403).
    public var readOnly: Bool
    /// Answer `PROPFIND` with `Depth: infinity` (by default refused with 403, as RFC 4918 allows:
    /// one request could otherwise walk the whole remote).
    public var allowDepthInfinity: Bool
    /// The largest `PROPFIND` body read, in bytes.
    public var maximumRequestXML: Int
    /// An Apache `htpasswd` file of bcrypt entries (`htpasswd -B`) whose users may sign in (Basic
    /// authentication), instead of ``credentials``; read again when it changes.
    public var htpasswdFile: String?
    /// A PEM certificate chain and private key: serve HTTPS (TLS 1.2 and later), with HTTP/2 for
    /// clients that offer it and HTTP/1.1 for the others.
    public var tlsCertificateFile: String?
    /// The private key for ``tlsCertificateFile`` (PEM).
    public var tlsKeyFile: String?

    /// Options for `host:port`; the rest at their defaults.
    public init(host: String = "127.0.0.1", port: Int = 8080, basePath: String = "", credentials: (user: String, password: String)? = nil,
                readOnly: Bool = false, allowDepthInfinity: Bool = false, maximumRequestXML: Int = 1 << 20,
                htpasswdFile: String? = nil, tlsCertificateFile: String? = nil, tlsKeyFile: String? = nil) {
        self.htpasswdFile = htpasswdFile
        self.tlsCertificateFile = tlsCertificateFile
        self.tlsKeyFile = tlsKeyFile
        self.host = host
        self.port = port
        self.basePath = basePath
        self.credentials = credentials
        self.readOnly = readOnly
        self.allowDepthInfinity = allowDepthInfinity
        self.maximumRequestXML = maximumRequestXML
    }
}

extension WebDAVServeOptions {
    /// The TLS files, when both are set.
    var tlsFiles: HTTPService.TLSFiles? {
        guard let tlsCertificateFile, let tlsKeyFile else { return nil }
        return HTTPService.TLSFiles(certificate: tlsCertificateFile, key: tlsKeyFile)
    }
}
