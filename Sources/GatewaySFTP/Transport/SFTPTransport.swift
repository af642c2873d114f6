/// A byte channel to an SFTP server: the data of an SSH session channel running the `sftp`
/// subsystem, whichever SSH carries it (swift-nio-ssh in process, or the system's `ssh` client).
public protocol SFTPTransport: Sendable {
    /// Sends one whole SFTP packet. Returns once the channel has taken it, so a fast sender waits
    /// for a slow channel.
    func send(_ packet: [UInt8]) async throws
    /// The bytes the server sends, in order. Iterated by one reader; ends when the channel closes,
    /// or throws the reason it failed.
    var inbound: AsyncThrowingStream<[UInt8], any Error> { get }
    /// Closes the channel (and the SSH connection or process under it). Safe to call twice.
    func close() async
    /// Runs `command` on the server in a channel of its own (an SSH `exec` request) and returns its
    /// exit status and at most `limit` bytes of its standard output; `nil` when this channel cannot
    /// run commands.
    func run(_ command: String, limit: Int) async throws -> (status: Int, output: [UInt8])?
}

extension SFTPTransport {
    public func run(_ command: String, limit: Int) async throws -> (status: Int, output: [UInt8])? { nil }
}
