/// The packet types of SFTP v3 this client sends and reads.
public enum SFTPPacketType: UInt8, Sendable {
    case initialize = 1, version = 2, open = 3, close = 4, read = 5, write = 6, lstat = 7, fstat = 8
    case setstat = 9, fsetstat = 10, opendir = 11, readdir = 12, remove = 13, mkdir = 14, rmdir = 15
    case realpath = 16, stat = 17, rename = 18, readlink = 19, symlink = 20
    case status = 101, handle = 102, data = 103, name = 104, attrs = 105
    case extended = 200, extendedReply = 201
}

/// The `pflags` of `SSH_FXP_OPEN`.
public struct SFTPOpenFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `SSH_FXF_READ`.
    public static let read = SFTPOpenFlags(rawValue: 0x01)
    /// `SSH_FXF_WRITE`.
    public static let write = SFTPOpenFlags(rawValue: 0x02)
    /// `SSH_FXF_APPEND`.
    public static let append = SFTPOpenFlags(rawValue: 0x04)
    /// `SSH_FXF_CREAT`.
    public static let create = SFTPOpenFlags(rawValue: 0x08)
    /// `SSH_FXF_TRUNC`.
    public static let truncate = SFTPOpenFlags(rawValue: 0x10)
    /// `SSH_FXF_EXCL`.
    public static let exclusive = SFTPOpenFlags(rawValue: 0x20)
}

/// A request the client sends. Paths and names are raw bytes on the wire; these take UTF-8 text.
public enum SFTPRequest: Sendable {
    case open(path: String, flags: SFTPOpenFlags, attributes: SFTPAttributes)
    case close(handle: [UInt8])
    case read(handle: [UInt8], offset: UInt64, length: UInt32)
    case write(handle: [UInt8], offset: UInt64, data: [UInt8])
    case lstat(path: String)
    case fstat(handle: [UInt8])
    case setstat(path: String, attributes: SFTPAttributes)
    case fsetstat(handle: [UInt8], attributes: SFTPAttributes)
    case opendir(path: String)
    case readdir(handle: [UInt8])
    case remove(path: String)
    case mkdir(path: String, attributes: SFTPAttributes)
    case rmdir(path: String)
    case realpath(path: String)
    case stat(path: String)
    case rename(from: String, to: String)
    case readlink(path: String)
    /// `SSH_FXP_SYMLINK`. OpenSSH's server takes its two paths in the opposite order to the draft
    /// (target first); this case writes them in OpenSSH's order.
    case symlink(linkPath: String, target: String)
    /// `SSH_FXP_EXTENDED`: an extension's name and its request-specific data, already encoded.
    case extended(name: String, data: [UInt8])

    /// The whole packet (length, type, id, fields) for request `id`.
    public func packet(id: UInt32) -> [UInt8] {
        func start(_ type: SFTPPacketType, capacity: Int = 64) -> SFTPWriter {
            var writer = SFTPWriter(type: type.rawValue, capacity: capacity)
            writer.write(id)
            return writer
        }
        var writer: SFTPWriter
        switch self {
        case .open(let path, let flags, let attributes):
            writer = start(.open)
            writer.write(string: path)
            writer.write(flags.rawValue)
            attributes.write(to: &writer)
        case .close(let handle):
            writer = start(.close)
            writer.write(string: handle)
        case .read(let handle, let offset, let length):
            writer = start(.read)
            writer.write(string: handle)
            writer.write(offset)
            writer.write(length)
        case .write(let handle, let offset, let data):
            writer = start(.write, capacity: data.count + handle.count + 24)
            writer.write(string: handle)
            writer.write(offset)
            writer.write(string: data)
        case .lstat(let path):
            writer = start(.lstat)
            writer.write(string: path)
        case .fstat(let handle):
            writer = start(.fstat)
            writer.write(string: handle)
        case .setstat(let path, let attributes):
            writer = start(.setstat)
            writer.write(string: path)
            attributes.write(to: &writer)
        case .fsetstat(let handle, let attributes):
            writer = start(.fsetstat)
            writer.write(string: handle)
            attributes.write(to: &writer)
        case .opendir(let path):
            writer = start(.opendir)
            writer.write(string: path)
        case .readdir(let handle):
            writer = start(.readdir)
            writer.write(string: handle)
        case .remove(let path):
            writer = start(.remove)
            writer.write(string: path)
        case .mkdir(let path, let attributes):
            writer = start(.mkdir)
            writer.write(string: path)
            attributes.write(to: &writer)
        case .rmdir(let path):
            writer = start(.rmdir)
            writer.write(string: path)
        case .realpath(let path):
            writer = start(.realpath)
            writer.write(string: path)
        case .stat(let path):
            writer = start(.stat)
            writer.write(string: path)
        case .rename(let from, let to):
            writer = start(.rename)
            writer.write(string: from)
            writer.write(string: to)
        case .readlink(let path):
            writer = start(.readlink)
            writer.write(string: path)
        case .symlink(let linkPath, let target):
            writer = start(.symlink)
            writer.write(string: target)
            writer.write(string: linkPath)
        case .extended(let name, let data):
            writer = start(.extended, capacity: data.count + name.utf8.count + 16)
            writer.write(string: name)
            writer.bytesAppend(data)
        }
        return writer.finish()
    }

    /// The `SSH_FXP_INIT` packet asking for version 3.
    public static func initPacket(version: UInt32 = 3) -> [UInt8] {
        var writer = SFTPWriter(type: SFTPPacketType.initialize.rawValue)
        writer.write(version)
        return writer.finish()
    }
}

/// The status codes of `SSH_FXP_STATUS`.
public enum SFTPStatusCode: Sendable, Equatable {
    case ok, eof, noSuchFile, permissionDenied, failure, badMessage, noConnection, connectionLost, operationUnsupported
    /// A code from a later protocol version or a server's own (for example 11 `FILE_ALREADY_EXISTS`).
    case other(UInt32)

    /// The code for its number.
    public init(_ value: UInt32) {
        switch value {
        case 0: self = .ok
        case 1: self = .eof
        case 2: self = .noSuchFile
        case 3: self = .permissionDenied
        case 4: self = .failure
        case 5: self = .badMessage
        case 6: self = .noConnection
        case 7: self = .connectionLost
        case 8: self = .operationUnsupported
        default: self = .other(value)
        }
    }

    /// Its number on the wire.
    public var rawValue: UInt32 {
        switch self {
        case .ok: 0
        case .eof: 1
        case .noSuchFile: 2
        case .permissionDenied: 3
        case .failure: 4
        case .badMessage: 5
        case .noConnection: 6
        case .connectionLost: 7
        case .operationUnsupported: 8
        case .other(let value): value
        }
    }
}

/// One entry of an `SSH_FXP_NAME` reply.
public struct SFTPName: Sendable, Equatable {
    /// The name as the server sent it.
    public var filename: [UInt8]
    /// The `ls -l` style line some servers add. Never parsed: kept only for messages.
    public var longName: [UInt8]
    /// The item's attributes.
    public var attributes: SFTPAttributes

    /// The name as text, or `nil` when it is not UTF-8.
    public var text: String? { String(validating: filename, as: UTF8.self) }

    public init(filename: [UInt8], longName: [UInt8] = [], attributes: SFTPAttributes) {
        self.filename = filename
        self.longName = longName
        self.attributes = attributes
    }
}

/// A reply the server sends, with the id of the request it answers.
public enum SFTPResponse: Sendable, Equatable {
    case version(UInt32, extensions: [SFTPExtension])
    case status(id: UInt32, code: SFTPStatusCode, message: String)
    case handle(id: UInt32, handle: [UInt8])
    case data(id: UInt32, bytes: [UInt8])
    case name(id: UInt32, entries: [SFTPName])
    case attrs(id: UInt32, attributes: SFTPAttributes)
    case extendedReply(id: UInt32, data: [UInt8])

    /// The request id it answers (`nil` for `VERSION`).
    public var id: UInt32? {
        switch self {
        case .version: nil
        case .status(let id, _, _), .handle(let id, _), .data(let id, _), .name(let id, _), .attrs(let id, _),
             .extendedReply(let id, _): id
        }
    }

    /// The most entries one `NAME` reply may hold (OpenSSH sends at most 100 a `READDIR`).
    static let maximumNameCount: UInt32 = 100_000

    /// Reads one packet's payload: its type byte and what follows (the length already removed).
    public init(payload: [UInt8]) throws {
        var reader = SFTPReader(payload)
        let typeByte = try reader.readByte()
        guard let type = SFTPPacketType(rawValue: typeByte) else { throw SFTPDecodingError("unknown packet type \(typeByte)") }
        if type == .version {
            let version = try reader.readUInt32()
            var extensions: [SFTPExtension] = []
            while reader.remaining > 0 {
                guard extensions.count < 256 else { throw SFTPDecodingError("more than 256 extensions") }
                extensions.append(SFTPExtension(name: try reader.readText(), data: try reader.readBytes()))
            }
            self = .version(version, extensions: extensions)
            return
        }
        let id = try reader.readUInt32()
        switch type {
        case .status:
            let code = SFTPStatusCode(try reader.readUInt32())
            // Version 3 servers add a message and a language tag; some old ones send neither.
            let message = reader.remaining > 0 ? try reader.readText() : ""
            self = .status(id: id, code: code, message: message)
        case .handle:
            let handle = try reader.readBytes()
            guard handle.count <= 256 else { throw SFTPDecodingError("a handle of \(handle.count) bytes (at most 256)") }
            self = .handle(id: id, handle: handle)
        case .data:
            self = .data(id: id, bytes: try reader.readBytes())
        case .name:
            let count = try reader.readUInt32()
            // Each entry takes at least 12 bytes (two empty strings and the attribute flags).
            guard count <= Self.maximumNameCount, UInt64(count) * 12 <= UInt64(reader.remaining) else {
                throw SFTPDecodingError("\(count) names in \(reader.remaining) bytes")
            }
            var entries: [SFTPName] = []
            entries.reserveCapacity(Int(count))
            for _ in 0..<count {
                let filename = try reader.readBytes()
                let longName = try reader.readBytes()
                entries.append(SFTPName(filename: filename, longName: longName, attributes: try SFTPAttributes(from: &reader)))
            }
            self = .name(id: id, entries: entries)
        case .attrs:
            self = .attrs(id: id, attributes: try SFTPAttributes(from: &reader))
        case .extendedReply:
            self = .extendedReply(id: id, data: reader.readRest())
        default:
            throw SFTPDecodingError("a client-side packet type (\(typeByte)) from the server")
        }
    }
}

/// An extension the server announced in `VERSION`, with its data (usually a version string such as `"1"`).
public struct SFTPExtension: Sendable, Equatable {
    public var name: String
    public var data: [UInt8]

    public init(name: String, data: [UInt8]) {
        self.name = name
        self.data = data
    }
}
