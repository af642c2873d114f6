import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal FTP stand-in on 127.0.0.1 whose folder listing is given line by line: what a real
/// server cannot be made to send (a name with "/", a line in no known format). It logs anyone in,
/// offers MLSD (when `machine`) or LIST only, passive mode (EPSV or PASV), and answers every other
/// look-up with 550.
public final class ScriptedFTPServer: Sendable {
    private let server: LoopbackServer
    public var port: Int { server.port }
    /// `ftp://127.0.0.1:PORT/`.
    public var url: String { "ftp://127.0.0.1:\(port)/" }

    public init(listing: [String], machine: Bool) throws {
        server = try LoopbackServer { client in Self.serve(client, listing: listing, machine: machine) }
    }

    public func stop() { server.stop() }

    private static func send(_ client: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private static func serve(_ client: Int32, listing: [String], machine: Bool) {
        send(client, "220 scripted\r\n")
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var data: (fd: Int32, port: Int)?
        while true {
            guard let end = buffer.firstIndex(of: UInt8(ascii: "\n")) else {
                let count = recv(client, &chunk, chunk.count, 0)
                if count <= 0 { break }
                buffer += chunk[0..<count]
                continue
            }
            let line = String(decoding: buffer[..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            buffer.removeSubrange(...end)
            let verb = line.split(separator: " ").first.map { $0.uppercased() } ?? ""
            switch verb {
            case "USER": send(client, "331 password\r\n")
            case "PASS": send(client, "230 in\r\n")
            case "PWD": send(client, "257 \"/\"\r\n")
            case "FEAT":
                send(client, machine ? "211-Features:\r\n MLST type*;size*;modify*;\r\n MLSD\r\n211 End\r\n" : "211-Features:\r\n211 End\r\n")
            case "OPTS", "TYPE", "MODE", "STRU": send(client, "200 ok\r\n")
            case "CWD": send(client, "250 ok\r\n")
            case "EPSV", "PASV":
                guard let opened = try? LoopbackSocket.bind(listening: true) else { send(client, "425 no\r\n"); continue }
                if let old = data { close(old.fd) }
                data = opened
                if verb == "EPSV" {
                    send(client, "229 Entering Extended Passive Mode (|||\(opened.port)|)\r\n")
                } else {
                    send(client, "227 Entering Passive Mode (127,0,0,1,\(opened.port >> 8),\(opened.port & 0xFF))\r\n")
                }
            case "MLSD", "LIST", "NLST":
                guard let listener = data else { send(client, "425 no data connection\r\n"); continue }
                data = nil
                if verb == "MLSD" && !machine { close(listener.fd); send(client, "500 unknown\r\n"); continue }
                send(client, "150 here it comes\r\n")
                let connection = accept(listener.fd, nil, nil)
                close(listener.fd)
                if connection >= 0 {
                    send(connection, listing.map { $0 + "\r\n" }.joined())
                    close(connection)
                }
                send(client, "226 done\r\n")
            case "QUIT":
                send(client, "221 bye\r\n")
                return
            default:
                send(client, "550 not here\r\n")
            }
        }
        if let data { close(data.fd) }
    }
}
