import Foundation
import GatewaySFTPProtocol
import Testing

/// SFTP v3 packets: what the client writes, byte for byte against the draft's layout, and what it
/// reads, including hostile and truncated replies (an error, never a trap or a huge allocation).
@Suite("SFTP packets")
struct SFTPPacketTests {
    @Test("requests are laid out as draft-ietf-secsh-filexfer-02 says")
    func requestLayout() {
        #expect(SFTPRequest.initPacket() == [0, 0, 0, 5, 1, 0, 0, 0, 3])
        let read = SFTPRequest.read(handle: [0xAA, 0xBB], offset: 0x1_0000_0002, length: 32768).packet(id: 7)
        #expect(read == [0, 0, 0, 23, 5, 0, 0, 0, 7, 0, 0, 0, 2, 0xAA, 0xBB, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0x80, 0])
        // OPEN: path, pflags, then ATTRS with only permissions.
        let open = SFTPRequest.open(path: "/a", flags: [.write, .create, .truncate], attributes: SFTPAttributes(permissions: 0o644)).packet(id: 1)
        #expect(open == [0, 0, 0, 23, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0x2F, 0x61, 0, 0, 0, 0x1A, 0, 0, 0, 4, 0, 0, 0x01, 0xA4])
        // OpenSSH's SYMLINK order: target first, then the link's path.
        let symlink = SFTPRequest.symlink(linkPath: "/l", target: "t").packet(id: 2)
        #expect(Array(symlink[9...]) == [0, 0, 0, 1, 0x74, 0, 0, 0, 2, 0x2F, 0x6C])
        // Times go together: setting one sets both fields.
        let setstat = SFTPRequest.setstat(path: "x", attributes: SFTPAttributes(accessTime: 5, modificationTime: 6)).packet(id: 3)
        #expect(Array(setstat[14...]) == [0, 0, 0, 8, 0, 0, 0, 5, 0, 0, 0, 6])
    }

    @Test("replies are read: status, handle, data, names with attributes, attrs, version with extensions")
    func replies() throws {
        #expect(try SFTPResponse(payload: [101, 0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0, 2, 0x6E, 0x6F, 0, 0, 0, 0])
                == .status(id: 9, code: .noSuchFile, message: "no"))
        // An old server's STATUS without message and language.
        #expect(try SFTPResponse(payload: [101, 0, 0, 0, 9, 0, 0, 0, 1]) == .status(id: 9, code: .eof, message: ""))
        #expect(try SFTPResponse(payload: [102, 0, 0, 0, 1, 0, 0, 0, 1, 0x7F]) == .handle(id: 1, handle: [0x7F]))
        #expect(try SFTPResponse(payload: [103, 0, 0, 0, 1, 0, 0, 0, 3, 1, 2, 3]) == .data(id: 1, bytes: [1, 2, 3]))
        let attributes: [UInt8] = [0, 0, 0, 0x0D, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0x81, 0xA4, 0, 0, 0, 1, 0x60, 0, 0, 0]
        let name: [UInt8] = [104, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, 0x66, 0, 0, 0, 0] + attributes
        guard case .name(4, let entries) = try SFTPResponse(payload: name), let entry = entries.first else {
            Issue.record("not a NAME reply")
            return
        }
        #expect(entry.text == "f")
        #expect(entry.attributes.size == 10)
        #expect(entry.attributes.kind == .file)
        #expect(entry.attributes.modificationTime == 0x6000_0000)
        let version: [UInt8] = [2, 0, 0, 0, 3, 0, 0, 0, 1, 0x78, 0, 0, 0, 1, 0x31]
        #expect(try SFTPResponse(payload: version) == .version(3, extensions: [SFTPExtension(name: "x", data: [0x31])]))
    }

    @Test("a name that is not UTF-8 has no text, and is kept as bytes")
    func nonUTF8Name() throws {
        let payload: [UInt8] = [104, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0xFF, 0xFE, 0, 0, 0, 0, 0, 0, 0, 0]
        guard case .name(_, let entries) = try SFTPResponse(payload: payload) else {
            Issue.record("not a NAME reply")
            return
        }
        #expect(entries.first?.text == nil)
        #expect(entries.first?.filename == [0xFF, 0xFE])
    }

    @Test("hostile replies fail with an error: huge counts and lengths, unknown types, every prefix of a valid reply")
    func hostile() throws {
        // A NAME claiming 2^32-1 entries in a few bytes: refused before anything is reserved.
        #expect(throws: SFTPDecodingError.self) { try SFTPResponse(payload: [104, 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0]) }
        // A string longer than the packet.
        #expect(throws: SFTPDecodingError.self) { try SFTPResponse(payload: [103, 0, 0, 0, 1, 0x7F, 0xFF, 0xFF, 0xFF]) }
        // Extended attributes claiming a billion pairs.
        #expect(throws: SFTPDecodingError.self) {
            try SFTPResponse(payload: [105, 0, 0, 0, 1, 0x80, 0, 0, 0, 0x40, 0, 0, 0])
        }
        #expect(throws: SFTPDecodingError.self) { try SFTPResponse(payload: [250, 0, 0, 0, 1]) }
        #expect(throws: SFTPDecodingError.self) { try SFTPResponse(payload: []) }
        let valid: [UInt8] = [104, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, 0x66, 0, 0, 0, 0, 0, 0, 0, 0x0D, 0, 0, 0, 0, 0, 0, 0, 10,
                              0, 0, 0x81, 0xA4, 0, 0, 0, 1, 0x60, 0, 0, 0]
        for length in 0..<valid.count {
            #expect(throws: SFTPDecodingError.self) { try SFTPResponse(payload: Array(valid[0..<length])) }
        }
        // Random damage: each byte flipped in turn either reads or throws, never traps.
        for index in valid.indices {
            var damaged = valid
            damaged[index] ^= 0xFF
            _ = try? SFTPResponse(payload: damaged)
        }
    }

    @Test("the frame decoder cuts a stream at packet boundaries, across any split, and bounds the length")
    func frames() throws {
        let packets = [SFTPRequest.initPacket(), SFTPRequest.read(handle: [1], offset: 0, length: 10).packet(id: 1),
                       SFTPRequest.remove(path: "/x").packet(id: 2)]
        let stream = packets.flatMap { $0 }
        for split in 1...stream.count {
            var decoder = SFTPFrameDecoder()
            var payloads: [[UInt8]] = []
            var start = 0
            while start < stream.count {
                decoder.append(stream[start..<min(start + split, stream.count)])
                start += split
                while let payload = try decoder.next() { payloads.append(payload) }
            }
            #expect(payloads == packets.map { Array($0.dropFirst(4)) }, "split every \(split) bytes")
            #expect(decoder.pendingCount == 0)
        }
        var decoder = SFTPFrameDecoder(maximumPacketLength: 1024)
        decoder.append([0, 0, 0x04, 0x01, 1])
        #expect(throws: SFTPDecodingError.self) { try decoder.next() }
        var empty = SFTPFrameDecoder()
        empty.append([0, 0, 0, 0])
        #expect(throws: SFTPDecodingError.self) { try empty.next() }
    }
}
