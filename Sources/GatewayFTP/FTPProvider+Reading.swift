import Foundation
public import GatewayCore
import GatewayTransport

extension FTPProvider {
    public func readStream(path: String, options: ReadOptions) async throws -> ByteStream {
        let remote = try RemotePath.normalize(path)
        let options = try options.checked(path: remote)
        guard remote != "/" else { throw CocoaError.posix(EISDIR, path: remote, remote: name) }
        if let expected = options.ifVersion {
            // FTP has no conditional RETR: compare the version (size and time) first.
            let current = try await attributesOfItem(path: remote)
            guard current.versionTag == expected else {
                throw FileProviderError.versionMismatch(path: remote, expected: expected, actual: current.versionTag)
            }
        }
        if options.length == 0 { return ByteStream(data: Data()) }
        do {
            // REST + RETR; with a length, libcurl closes the data connection once it has the bytes.
            return try await client.retrieve(try await serverPath(remote), path: remote, offset: options.offset, length: options.length,
                                             buffer: options.bufferSize)
        } catch let error as FileProviderFTPError {
            // A REST beyond the end is an empty read, as an HTTP 416 is.
            if options.offset > 0, let item = try? await itemIfPresent(path: remote), item.type == .file,
               let size = item.size, options.offset >= size {
                return ByteStream(data: Data())
            }
            throw await refine(error, path: remote, expecting: .file)
        } catch let error as URLError where error.code.rawValue == URLError.Code.unknown.rawValue && options.offset > 0 {
            // libcurl refuses a resume offset beyond the end of the file before asking the server.
            if let item = try? await itemIfPresent(path: remote), let size = item.size, options.offset >= size {
                return ByteStream(data: Data())
            }
            throw error
        }
    }
}
