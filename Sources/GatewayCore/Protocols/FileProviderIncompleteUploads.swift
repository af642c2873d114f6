public import Foundation

/// An upload a server keeps open between requests (an S3 multipart upload): its parts take space
/// until it is completed or aborted, yet no listing shows them.
public struct IncompleteUpload: Sendable, Hashable {
    /// The path the upload is for.
    public var path: String
    /// The server's id of the upload.
    public var id: String
    /// When it was started, when the server says.
    public var initiated: Date?
    /// The server's own name for the upload's file (an S3 object key), for the provider that
    /// listed it: exact also where ``path`` cannot be (a key no path names, shown as near as it can).
    public var serverName: String?

    /// Creates a description.
    public init(path: String, id: String, initiated: Date?, serverName: String? = nil) {
        self.path = path
        self.id = id
        self.initiated = initiated
        self.serverName = serverName
    }
}

/// A provider whose server keeps incomplete uploads out of sight (S3's multipart uploads): they
/// can be listed and aborted (`gateway cleanup` does both). A write interrupted by `kill -9` leaves
/// one; the next write of the same path continues it where its parts still match.
public protocol FileProviderIncompleteUploads: FileProviderBasic {
    /// The incomplete uploads for paths below `path` (or for `path` itself), a page of the
    /// server's list at a time.
    func incompleteUploads(below path: String) -> PullSequence<IncompleteUpload>

    /// Aborts an upload: its parts are freed. An upload already gone is not an error.
    func abortIncompleteUpload(_ upload: IncompleteUpload) async throws
}
