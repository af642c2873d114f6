/// How `gateway serve webdav` serves a remote.
public struct WebDAVServeOptions: Sendable {
    /// Address to listen on.
    public var host: String
    /// Port to listen on (0: any free port).
    public var port: Int
    /// A path prefix every URL starts with (`/dav`), or empty.
    public var basePath: String
    /// The user and password every request must present (Basic authentication), or `nil` to
    /// serve without authentication.
    public var credentials: (user: String, password: String)?
    /// Refuse every method that changes something (403).
    public var readOnly: Bool
    /// Answer `PROPFIND` with `Depth: infinity` (by default refused with 403, as RFC 4918 allows:
    /// one request could otherwise walk the whole remote).
    public var allowDepthInfinity: Bool
    /// The largest `PROPFIND` body read, in bytes.
    public var maximumRequestXML: Int

    /// Options for `host:port`; the rest at their defaults.
    public init(host: String = "127.0.0.1", port: Int = 8080, basePath: String = "", credentials: (user: String, password: String)? = nil,
                readOnly: Bool = false, allowDepthInfinity: Bool = false, maximumRequestXML: Int = 1 << 20) {
        self.host = host
        self.port = port
        self.basePath = basePath
        self.credentials = credentials
        self.readOnly = readOnly
        self.allowDepthInfinity = allowDepthInfinity
        self.maximumRequestXML = maximumRequestXML
    }
}
