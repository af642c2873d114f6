/// An item's attributes as SFTP v3 carries them (`ATTRS`): each field present only when its flag is set.
public struct SFTPAttributes: Sendable, Equatable {
    /// The `flags` bits of an `ATTRS` structure.
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// `SSH_FILEXFER_ATTR_SIZE`.
        public static let size = Flags(rawValue: 0x1)
        /// `SSH_FILEXFER_ATTR_UIDGID`.
        public static let uidgid = Flags(rawValue: 0x2)
        /// `SSH_FILEXFER_ATTR_PERMISSIONS`.
        public static let permissions = Flags(rawValue: 0x4)
        /// `SSH_FILEXFER_ATTR_ACMODTIME`.
        public static let acmodtime = Flags(rawValue: 0x8)
        /// `SSH_FILEXFER_ATTR_EXTENDED`.
        public static let extended = Flags(rawValue: 0x8000_0000)
    }

    /// The file's size in bytes.
    public var size: UInt64?
    /// The owner's numeric id.
    public var uid: UInt32?
    /// The group's numeric id.
    public var gid: UInt32?
    /// The POSIX mode: type bits (`S_IFMT`) and permissions.
    public var permissions: UInt32?
    /// Last access, seconds since 1970 (unsigned 32-bit in v3).
    public var accessTime: UInt32?
    /// Last modification, seconds since 1970.
    public var modificationTime: UInt32?
    /// Extended attributes as (type, data) pairs.
    public var extended: [(type: String, data: [UInt8])] = []

    /// Attributes with no field set.
    public init(size: UInt64? = nil, permissions: UInt32? = nil, accessTime: UInt32? = nil, modificationTime: UInt32? = nil) {
        self.size = size
        self.permissions = permissions
        self.accessTime = accessTime
        self.modificationTime = modificationTime
    }

    public static func == (a: SFTPAttributes, b: SFTPAttributes) -> Bool {
        a.size == b.size && a.uid == b.uid && a.gid == b.gid && a.permissions == b.permissions
            && a.accessTime == b.accessTime && a.modificationTime == b.modificationTime
            && a.extended.map(\.type) == b.extended.map(\.type) && a.extended.map(\.data) == b.extended.map(\.data)
    }

    /// Access and modification time both set to `secondsSince1970` (SFTP v3 keeps whole seconds,
    /// unsigned 32-bit: earlier or later times are clamped).
    public static func times(secondsSince1970 seconds: Double) -> SFTPAttributes {
        let stamp = UInt32(clamping: Int64(seconds.rounded(.down)))
        return SFTPAttributes(accessTime: stamp, modificationTime: stamp)
    }

    /// The kind of item the mode's type bits name.
    public enum Kind: Sendable, Equatable {
        case file, directory, symbolicLink, other
    }

    /// What the type bits say, `nil` when the server sent no permissions.
    public var kind: Kind? {
        guard let permissions else { return nil }
        switch permissions & 0o170000 {
        case 0o100000: return .file
        case 0o040000: return .directory
        case 0o120000: return .symbolicLink
        default: return .other
        }
    }

    /// The most extended pairs one structure may hold: a bound on what a hostile count can make us allocate.
    static let maximumExtendedCount: UInt32 = 1024

    /// Reads an `ATTRS` structure.
    public init(from reader: inout SFTPReader) throws {
        let flags = Flags(rawValue: try reader.readUInt32())
        if flags.contains(.size) { size = try reader.readUInt64() }
        if flags.contains(.uidgid) {
            uid = try reader.readUInt32()
            gid = try reader.readUInt32()
        }
        if flags.contains(.permissions) { permissions = try reader.readUInt32() }
        if flags.contains(.acmodtime) {
            accessTime = try reader.readUInt32()
            modificationTime = try reader.readUInt32()
        }
        if flags.contains(.extended) {
            let count = try reader.readUInt32()
            guard count <= Self.maximumExtendedCount, Int(count) * 8 <= reader.remaining else {
                throw SFTPDecodingError("\(count) extended attributes")
            }
            for _ in 0..<count {
                extended.append((try reader.readText(), try reader.readBytes()))
            }
        }
    }

    /// Appends this structure to a packet.
    public func write(to writer: inout SFTPWriter) {
        var flags: Flags = []
        if size != nil { flags.insert(.size) }
        if uid != nil, gid != nil { flags.insert(.uidgid) }
        if permissions != nil { flags.insert(.permissions) }
        if accessTime != nil || modificationTime != nil { flags.insert(.acmodtime) }
        if !extended.isEmpty { flags.insert(.extended) }
        writer.write(flags.rawValue)
        if let size { writer.write(size) }
        if let uid, let gid {
            writer.write(uid)
            writer.write(gid)
        }
        if let permissions { writer.write(permissions) }
        if flags.contains(.acmodtime) {
            writer.write(accessTime ?? modificationTime ?? 0)
            writer.write(modificationTime ?? accessTime ?? 0)
        }
        if !extended.isEmpty {
            writer.write(UInt32(truncatingIfNeeded: extended.count))
            for pair in extended {
                writer.write(string: pair.type)
                writer.write(string: pair.data)
            }
        }
    }
}
