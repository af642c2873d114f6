import Foundation
import NIOSSH
import Testing

@testable import GatewaySFTP
@testable import GatewayTestSupport

// Private keys, fingerprints and known_hosts against OpenSSH's own tools: the keys are made by
// /usr/bin/ssh-keygen in a temporary folder of each test, and what it prints (`-y`, `-l`) is the
// oracle.

/// A temporary folder, and OpenSSH's tools run in it.
private struct Scratch: ~Copyable {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sshauth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func read(_ name: String) throws -> String { try String(contentsOfFile: path(name), encoding: .utf8) }

    func write(_ name: String, _ text: String) throws { try text.write(toFile: path(name), atomically: true, encoding: .utf8) }

    /// Runs `program` to its end in the folder (through the support's `ChildProcess`, which reaps
    /// its child itself); its standard output.
    @discardableResult
    func run(_ program: String, _ arguments: [String]) throws -> String {
        let result = try ChildProcess.run(program, arguments, environment: ProcessInfo.processInfo.environment, directory: folder.path)
        guard result.status == 0 else {
            throw ToolFailure(description: "\(program) \(arguments) exited \(result.status): " + String(decoding: result.stderr, as: UTF8.self))
        }
        return String(decoding: result.stdout, as: UTF8.self)
    }

    /// `ssh-keygen -q -f NAME -C comment` with `arguments`; the private key's text.
    @discardableResult
    func keygen(_ name: String, _ arguments: [String]) throws -> String {
        try run("/usr/bin/ssh-keygen", ["-q", "-C", "test@sshauth", "-f", path(name)] + arguments)
        return try read(name)
    }

    /// `ssh-keygen -y`: the public key of the private key NAME, as `type base64` (comment dropped).
    func publicKey(_ name: String, passphrase: String = "") throws -> String {
        try firstTwoFields(run("/usr/bin/ssh-keygen", ["-y", "-P", passphrase, "-f", path(name)]))
    }

    /// `ssh-keygen -l`: the SHA256 fingerprint of key NAME.
    func fingerprint(_ name: String) throws -> String {
        let fields = try run("/usr/bin/ssh-keygen", ["-l", "-E", "sha256", "-f", path(name)]).split(separator: " ")
        return fields.count > 1 ? String(fields[1]) : ""
    }
}

private struct ToolFailure: Error, CustomStringConvertible {
    let description: String
}

private func firstTwoFields(_ line: String) -> String {
    line.split(whereSeparator: \.isWhitespace).prefix(2).joined(separator: " ")
}

/// The error `body` throws, if it is an `SSHKeyError`.
private func keyError(_ body: () throws -> Any) -> SSHKeyError? {
    do {
        _ = try body()
        return nil
    } catch let error as SSHKeyError {
        return error
    } catch {
        return nil
    }
}

/// A deterministic generator for the damage tests (SplitMix64), so a failure can be replayed.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The decoded body of an armored key, and the armor around a body.
private func pemBody(_ text: String) -> [UInt8] {
    let base64 = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
    return Array(Data(base64Encoded: base64) ?? Data())
}

private func armor(_ body: [UInt8], label: String = "OPENSSH PRIVATE KEY") -> String {
    "-----BEGIN \(label)-----\n\(Data(body).base64EncodedString(options: .lineLength64Characters))\n-----END \(label)-----\n"
}

@Suite("SSH private keys, fingerprints and known_hosts")
struct SSHAuthenticationTests {
    /// One way ssh-keygen writes a key.
    struct KeyKind: CustomTestStringConvertible, Sendable {
        let arguments: [String]
        let passphrase: String?
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let kinds: [KeyKind] = [
        KeyKind(arguments: ["-t", "ed25519", "-N", ""], passphrase: nil),
        KeyKind(arguments: ["-t", "ed25519", "-N", "hunter2"], passphrase: "hunter2"),
        KeyKind(arguments: ["-t", "ecdsa", "-b", "256", "-N", ""], passphrase: nil),
        KeyKind(arguments: ["-t", "ecdsa", "-b", "384", "-N", ""], passphrase: nil),
        KeyKind(arguments: ["-t", "ecdsa", "-b", "521", "-N", ""], passphrase: nil),
        // Encrypted keys below take 2 bcrypt rounds (-a 2), not the default 16 above: debug builds are slow.
        KeyKind(arguments: ["-t", "ecdsa", "-b", "521", "-N", "pass phrase ü", "-a", "2"], passphrase: "pass phrase ü"),
        KeyKind(arguments: ["-t", "ed25519", "-N", "hunter2", "-a", "2", "-Z", "aes256-gcm@openssh.com"], passphrase: "hunter2"),
        KeyKind(arguments: ["-t", "ecdsa", "-N", "hunter2", "-a", "2", "-Z", "aes128-ctr"], passphrase: "hunter2"),
        KeyKind(arguments: ["-t", "ed25519", "-N", "hunter2", "-a", "3", "-Z", "aes256-cbc"], passphrase: "hunter2"),
        KeyKind(arguments: ["-t", "ed25519", "-N", "hunter2", "-a", "1", "-Z", "aes128-gcm@openssh.com"], passphrase: "hunter2"),
        // The PEM forms OpenSSL writes: SEC1 (also with OpenSSL's legacy encryption) and PKCS#8.
        KeyKind(arguments: ["-t", "ecdsa", "-b", "256", "-m", "PEM", "-N", ""], passphrase: nil),
        KeyKind(arguments: ["-t", "ecdsa", "-b", "384", "-m", "PEM", "-N", ""], passphrase: nil),
        KeyKind(arguments: ["-t", "ecdsa", "-b", "521", "-m", "PEM", "-N", ""], passphrase: nil),
        KeyKind(arguments: ["-t", "ecdsa", "-b", "384", "-m", "PEM", "-N", "hunter2"], passphrase: "hunter2"),
        KeyKind(arguments: ["-t", "ecdsa", "-b", "256", "-m", "PKCS8", "-N", ""], passphrase: nil),
    ]

    @Test("a key ssh-keygen wrote parses to the public key and fingerprint ssh-keygen prints", arguments: kinds)
    func parsesWhatSSHKeygenWrites(kind: KeyKind) throws {
        let scratch = try Scratch()
        let text = try scratch.keygen("id", kind.arguments)
        let key = try OpenSSHPrivateKey.parse(text, passphrase: kind.passphrase, source: scratch.path("id"))
        #expect(firstTwoFields(String(openSSHPublicKey: key.publicKey)) == (try scratch.publicKey("id", passphrase: kind.passphrase ?? "")))
        let fingerprint = HostKeyFingerprint(key.publicKey)
        #expect(fingerprint.description == (try scratch.fingerprint("id")))
        #expect(fingerprint.description == (try scratch.fingerprint("id.pub")))
        let expectedType = String(try scratch.read("id.pub").prefix { $0 != " " })
        #expect(HostKeyFingerprint.keyType(of: key.publicKey) == expectedType)
    }

    @Test("an Ed25519 key in PKCS#8 (openssl genpkey) parses to its public key")
    func ed25519PKCS8() throws {
        let scratch = try Scratch()
        try scratch.run("/usr/bin/openssl", ["genpkey", "-algorithm", "ed25519", "-out", scratch.path("ed.pem")])
        try scratch.run("/usr/bin/openssl", ["pkey", "-in", scratch.path("ed.pem"), "-pubout", "-outform", "DER",
                                             "-out", scratch.path("ed.pub.der")])
        let key = try OpenSSHPrivateKey.parse(try scratch.read("ed.pem"), passphrase: nil)
        let publicDER = try Data(contentsOf: URL(fileURLWithPath: scratch.path("ed.pub.der")))
        #expect(HostKeyFingerprint.wireBlob(of: key.publicKey).suffix(32) == Array(publicDER.suffix(32)))
        #expect(HostKeyFingerprint.keyType(of: key.publicKey) == "ssh-ed25519")
    }

    @Test("an encrypted key without a passphrase, or with a wrong one, says so and never shows the passphrase",
          arguments: [["-t", "ed25519", "-a", "2"], ["-t", "ecdsa", "-a", "2", "-Z", "aes256-gcm@openssh.com"], ["-t", "ecdsa", "-m", "PEM"]])
    func passphraseErrors(arguments: [String]) throws {
        let scratch = try Scratch()
        let text = try scratch.keygen("id", arguments + ["-N", "right horse"])
        let path = scratch.path("id")
        #expect(keyError { try OpenSSHPrivateKey.parse(text, passphrase: nil, source: path) }
            == .passphraseRequired(key: "the private key \(path)"))
        #expect(keyError { try OpenSSHPrivateKey.parse(text, passphrase: "", source: path) }
            == .passphraseRequired(key: "the private key \(path)"))
        let wrong = keyError { try OpenSSHPrivateKey.parse(text, passphrase: "wrong horse", source: path) }
        #expect(wrong == .wrongPassphrase(key: "the private key \(path)"))
        #expect(wrong?.description == "wrong passphrase for the private key \(path)")
        #expect(SSHKeyError.passphraseRequired(key: "the private key \(path)").description
            == "the private key \(path) is encrypted: set key_passphrase_env")
        #expect(wrong?.description.contains("horse") == false)
    }

    @Test("RSA and DSA keys, in every form ssh-keygen writes, ask for the system ssh client",
          arguments: [["-t", "rsa", "-b", "2048", "-N", ""], ["-t", "rsa", "-b", "2048", "-N", "hunter2"],
                      ["-t", "rsa", "-b", "2048", "-m", "PEM", "-N", ""], ["-t", "rsa", "-b", "2048", "-m", "PKCS8", "-N", ""],
                      ["-t", "dsa", "-N", ""]])
    func rsaAndDSA(arguments: [String]) throws {
        let scratch = try Scratch()
        let text = try scratch.keygen("id", arguments)
        let error = keyError { try OpenSSHPrivateKey.parse(text, passphrase: nil) }
        let algorithm = arguments[1] == "rsa" ? "RSA" : "DSA"
        #expect(error == .needsSystemSSH(key: "the private key", algorithm: algorithm))
        #expect(error?.description.contains("\(algorithm) keys need the system ssh client: set ssh_command "
            + "(the in-process SSH channel signs with Ed25519 and ECDSA keys only)") == true)
    }

    @Test("other files: a public key, an encrypted PKCS#8 key, an unknown cipher or KDF, nothing at all")
    func otherFiles() throws {
        let scratch = try Scratch()
        let text = try scratch.keygen("id", ["-t", "ed25519", "-N", "hunter2"])
        guard case .unsupportedFormat = keyError({ try OpenSSHPrivateKey.parse(try scratch.read("id.pub"), passphrase: nil) }) else {
            Issue.record("a public key was not refused as such")
            return
        }
        let pkcs8 = try scratch.keygen("p8", ["-t", "ecdsa", "-m", "PKCS8", "-N", "hunter2"])
        guard case .unsupportedFormat(_, let detail) = keyError({ try OpenSSHPrivateKey.parse(pkcs8, passphrase: "hunter2") }) else {
            Issue.record("an encrypted PKCS#8 key was not refused as such")
            return
        }
        #expect(detail.contains("ssh-keygen -p"))
        // Rename the cipher and the KDF inside the file (same lengths, so the layout holds).
        let body = pemBody(text)
        let renamedCipher = armor(replacing(Array("aes256-ctr".utf8), with: Array("aes999-ctr".utf8), in: body))
        #expect(keyError { try OpenSSHPrivateKey.parse(renamedCipher, passphrase: "hunter2") }
            == .unsupportedCipher(key: "the private key", cipher: "\"aes999-ctr\""))
        let renamedKDF = armor(replacing(Array("bcrypt".utf8), with: Array("scrypt".utf8), in: body))
        #expect(keyError { try OpenSSHPrivateKey.parse(renamedKDF, passphrase: "hunter2") }
            == .unsupportedKDF(key: "the private key", kdf: "\"scrypt\""))
        for junk in ["", "hello", "-----BEGIN OPENSSH PRIVATE KEY-----\n", "-----BEGIN FOO-----\nAAAA\n-----END FOO-----"] {
            #expect(keyError { try OpenSSHPrivateKey.parse(junk, passphrase: nil) } != nil)
        }
    }

    private func replacing(_ old: [UInt8], with new: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        guard let start = (0...(bytes.count - old.count)).first(where: { bytes[$0..<$0 + old.count].elementsEqual(old) }) else {
            return bytes
        }
        var copy = bytes
        copy.replaceSubrange(start..<start + old.count, with: new)
        return copy
    }

    @Test("every prefix of a key file, as text and as bytes, is an error, never a crash",
          arguments: [["-t", "ed25519", "-N", ""], ["-t", "ecdsa", "-b", "521", "-N", ""], ["-t", "ed25519", "-a", "2", "-N", "hunter2"],
                      ["-t", "ecdsa", "-m", "PEM", "-N", "hunter2"]])
    func truncated(arguments: [String]) throws {
        let scratch = try Scratch()
        let text = try scratch.keygen("id", arguments)
        let passphrase = arguments.last == "hunter2" ? "hunter2" : nil
        // Text prefixes: an error until the END line is whole, the key from then on.
        let label = text.prefix { $0 != "\n" }.replacingOccurrences(of: "BEGIN", with: "END")
        let original = String(openSSHPublicKey: try OpenSSHPrivateKey.parse(text, passphrase: passphrase).publicKey)
        for length in 0...text.count {
            let prefix = String(text.prefix(length))
            if prefix.contains(label) {
                #expect(String(openSSHPublicKey: try OpenSSHPrivateKey.parse(prefix, passphrase: passphrase).publicKey) == original)
            } else {
                #expect(keyError { try OpenSSHPrivateKey.parse(prefix, passphrase: passphrase) } != nil)
            }
        }
        // Byte prefixes of the OpenSSH body, armored again: each is cut short inside the structure.
        guard text.hasPrefix("-----BEGIN OPENSSH") else { return }
        let body = pemBody(text)
        for length in 0..<body.count {
            let error = keyError { try OpenSSHPrivateKey.parse(armor(Array(body.prefix(length))), passphrase: passphrase) }
            guard case .malformed = error else {
                Issue.record("a \(length)-byte prefix gave \(String(describing: error))")
                continue
            }
        }
    }

    @Test("random damage to a key's bytes or text gives an SSHKeyError or (in the comment) the same key, never a crash",
          arguments: [["-t", "ed25519", "-N", ""], ["-t", "ecdsa", "-b", "384", "-N", ""], ["-t", "ed25519", "-N", "hunter2", "-a", "1"],
                      ["-t", "ecdsa", "-b", "256", "-m", "PEM", "-N", ""]])
    func garbled(arguments: [String]) throws {
        let scratch = try Scratch()
        let text = try scratch.keygen("id", arguments)
        let passphrase = arguments.contains("hunter2") ? "hunter2" : nil
        let original = String(openSSHPublicKey: try OpenSSHPrivateKey.parse(text, passphrase: passphrase).publicKey)
        let body = pemBody(text)
        let label = text.hasPrefix("-----BEGIN OPENSSH") ? "OPENSSH PRIVATE KEY" : "EC PRIVATE KEY"
        var random = SplitMix(state: 0x5EED_0000 &+ UInt64(body.count))
        // The bcrypt rounds (the uint32 before the key count) stay as they are: a flip there only
        // makes the KDF slower, which the rounds test covers.
        var protected: Range<Int> = 0..<0
        if passphrase != nil, let bcrypt = (0..<body.count - 6).first(where: { body[$0..<$0 + 6].elementsEqual("bcrypt".utf8) }) {
            protected = (bcrypt + 6 + 4 + 4 + 16)..<(bcrypt + 6 + 4 + 4 + 16 + 4)
        }
        var parsedAnyway = 0
        for round in 0..<(passphrase == nil ? 1500 : 60) {
            var damaged = body
            for _ in 0...(round % 3) {
                let index = Int.random(in: 0..<damaged.count, using: &random)
                if protected.contains(index) { continue }
                damaged[index] ^= UInt8.random(in: 1...255, using: &random)
            }
            do {
                let key = try OpenSSHPrivateKey.parse(armor(damaged, label: label), passphrase: passphrase)
                // Only a change the format doesn't protect (the comment, DER slack) may pass.
                #expect(String(openSSHPublicKey: key.publicKey) == original)
                parsedAnyway += 1
            } catch {
                // Refused with an SSHKeyError (parse's typed throws allows nothing else).
            }
        }
        // The text itself: random characters changed, lines dropped.
        var characters = Array(text)
        for _ in 0..<(passphrase == nil ? 300 : 30) {
            var damaged = characters
            damaged[Int.random(in: 0..<damaged.count, using: &random)] = "!#AZaz09+/=\n- ".randomElement(using: &random) ?? "A"
            _ = keyError { try OpenSSHPrivateKey.parse(String(damaged), passphrase: passphrase) }
        }
        characters.removeAll { $0 == "=" }
        _ = keyError { try OpenSSHPrivateKey.parse(String(characters), passphrase: passphrase) }
        #expect(parsedAnyway < 1500 / 4)
    }

    @Test("a huge bcrypt rounds count is refused before any work")
    func hugeRounds() throws {
        let scratch = try Scratch()
        let text = try scratch.keygen("id", ["-t", "ed25519", "-N", "hunter2"])
        var body = pemBody(text)
        guard let bcrypt = (0..<body.count - 6).first(where: { body[$0..<$0 + 6].elementsEqual("bcrypt".utf8) }) else {
            Issue.record("no bcrypt in an encrypted key")
            return
        }
        let rounds = bcrypt + 6 + 4 + 4 + 16  // after "bcrypt", the options' length, the salt's length, the salt
        #expect(Array(body[rounds..<rounds + 4]) == [0, 0, 0, 16])
        body[rounds] = 0xFF
        let clock = ContinuousClock()
        let started = clock.now
        guard case .unsupportedFormat(_, let detail) = keyError({ try OpenSSHPrivateKey.parse(armor(body), passphrase: "hunter2") }) else {
            Issue.record("the rounds were not refused")
            return
        }
        #expect(detail.contains("bcrypt rounds"))
        #expect(clock.now - started < .seconds(10))  // (2^32 rounds: hours)
    }

    @Test("bcrypt_pbkdf refuses what OpenSSH's refuses; Blowfish passes its test vector")
    func bcryptEdges() {
        #expect(BcryptPBKDF.deriveKey(passphrase: [], salt: [1], rounds: 1, keyLength: 32) == nil)
        #expect(BcryptPBKDF.deriveKey(passphrase: [1], salt: [], rounds: 1, keyLength: 32) == nil)
        #expect(BcryptPBKDF.deriveKey(passphrase: [1], salt: [1], rounds: 0, keyLength: 32) == nil)
        #expect(BcryptPBKDF.deriveKey(passphrase: [1], salt: [1], rounds: 1, keyLength: 1025) == nil)
        #expect(BcryptPBKDF.deriveKey(passphrase: [1], salt: [1], rounds: 1, keyLength: 1024)?.count == 1024)
        // blowfish.c's own check: key "abcdefghijklmnopqrstuvwxyz" encrypts 0x424c4f57 0x46495348
        // to 0x324ed0fe 0xf413a203 (the classic key schedule: expand0state over pi's digits).
        var blowfish = Blowfish()
        blowfish.expand0State(key: Array("abcdefghijklmnopqrstuvwxyz".utf8))
        var left: UInt32 = 0x424C_4F57, right: UInt32 = 0x4649_5348
        blowfish.encipher(&left, &right)
        #expect(left == 0x324E_D0FE && right == 0xF413_A203)
    }

    @Test("fingerprints match with or without SHA256: and padding, and nothing else")
    func fingerprintMatching() throws {
        let key = try NIOSSHPublicKey(openSSHPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl")
        let fingerprint = HostKeyFingerprint(key)
        let text = fingerprint.description
        #expect(text.hasPrefix("SHA256:") && !text.hasSuffix("=") && text.count == 7 + 43)
        #expect(fingerprint.matches(text))
        #expect(fingerprint.matches(String(text.dropFirst(7))))
        #expect(fingerprint.matches(" \(text)= \n"))
        #expect(fingerprint.matches("sha256:" + text.dropFirst(7)))
        #expect(!fingerprint.matches(""))
        #expect(!fingerprint.matches("SHA256:"))
        #expect(!fingerprint.matches(text.lowercased()))
        #expect(!fingerprint.matches(String(text.dropLast())))
        #expect(HostKeyFingerprint.keyType(of: key) == "ssh-ed25519")
        #expect(HostKeyFingerprint.wireBlob(of: key).count == 51)
    }

    @Test("known_hosts: plain, hashed (ssh-keygen -H), ports, changed, unknown, revoked, wildcards, negation, markers")
    func knownHosts() throws {
        let scratch = try Scratch()
        var keys: [String: (line: String, key: NIOSSHPublicKey, fingerprint: String)] = [:]
        for (name, type) in [("a", "ed25519"), ("b", "ecdsa"), ("c", "ed25519"), ("d", "ecdsa"), ("e", "ed25519")] {
            try scratch.keygen(name, ["-t", type, "-N", ""])
            let line = firstTwoFields(try scratch.read("\(name).pub"))
            keys[name] = (line, try NIOSSHPublicKey(openSSHPublicKey: line), try scratch.fingerprint("\(name).pub"))
        }
        guard let a = keys["a"], let b = keys["b"], let c = keys["c"], let d = keys["d"], let e = keys["e"] else { return }
        try scratch.keygen("r", ["-t", "rsa", "-b", "2048", "-N", ""])
        let rsaLine = firstTwoFields(try scratch.read("r.pub"))
        let rsaFingerprint = try scratch.fingerprint("r.pub")
        let good = """
            # ssh-keyscan style lines, a comment and a blank line

            server.example.com,192.0.2.10 \(a.line)
            server.example.com \(rsaLine)
            [127.0.0.1]:2222 \(b.line) a comment
            *.wild.example,!secret.wild.example,node-?.lab \(c.line)
            @revoked * \(e.line)
            example.net \(e.line)
            @cert-authority *.example.com \(d.line)

            """
        // Lines OpenSSH calls invalid (ssh-keygen -H refuses a file with them), and one overlong.
        let bad = """
            broken.example ssh-ed25519 not!base64
            short.example ssh-ed25519
            @unknown-marker marked.example \(a.line)
            long.example \(d.line) \(String(repeating: "x", count: 9000))
            """
        try scratch.write("known_hosts", good)
        try scratch.run("/usr/bin/ssh-keygen", ["-H", "-f", scratch.path("known_hosts")])
        let hashed = try scratch.read("known_hosts") + bad
        let plain = good + bad
        #expect(hashed.split(separator: "\n").filter { $0.hasPrefix("|1|") }.count >= 5)
        #expect(!hashed.contains("server.example.com") && !hashed.contains("127.0.0.1"))

        for (text, form) in [(plain, "plain"), (hashed, "hashed")] {
            let file = KnownHosts(text)
            let comment = Comment(rawValue: form)
            #expect(file.check(host: "server.example.com", port: 22, key: a.key) == .trusted, comment)
            #expect(file.check(host: "SERVER.Example.COM", port: 22, key: a.key) == .trusted, comment)
            #expect(file.check(host: "192.0.2.10", port: 22, key: a.key) == .trusted, comment)
            #expect(file.check(host: "server.example.com", port: 22, key: c.key) == .changed(known: [a.fingerprint, rsaFingerprint]),
                    comment)
            #expect(file.check(host: "server.example.com", port: 2200, key: a.key) == .unknown, comment)
            #expect(file.check(host: "127.0.0.1", port: 2222, key: b.key) == .trusted, comment)
            #expect(file.check(host: "127.0.0.1", port: 22, key: b.key) == .unknown, comment)
            #expect(file.check(host: "127.0.0.1", port: 2222, key: d.key) == .changed(known: [b.fingerprint]), comment)
            #expect(file.check(host: "unknown.example", port: 22, key: a.key) == .unknown, comment)
            #expect(file.check(host: "example.net", port: 22, key: e.key) == .revoked, comment)
            #expect(file.check(host: "anything.example", port: 22, key: e.key) == .revoked, comment)
            // The certificate authority's key is not the host's key.
            #expect(file.check(host: "www.example.com", port: 22, key: d.key) == .unknown, comment)
            // Skipped lines: damaged, unknown marker, overlong.
            #expect(file.check(host: "marked.example", port: 22, key: a.key) == .unknown, comment)
            #expect(file.check(host: "long.example", port: 22, key: d.key) == .unknown, comment)
        }
        // Wildcards and negation stay plain under ssh-keygen -H (it hashes only plain names).
        #expect(hashed.contains("*.wild.example,!secret.wild.example,node-?.lab"))
        let file = KnownHosts(hashed)
        #expect(file.check(host: "a.wild.example", port: 22, key: c.key) == .trusted)
        #expect(file.check(host: "x.y.wild.example", port: 22, key: c.key) == .trusted)
        #expect(file.check(host: "wild.example", port: 22, key: c.key) == .unknown)
        #expect(file.check(host: "secret.wild.example", port: 22, key: c.key) == .unknown)
        #expect(file.check(host: "node-7.lab", port: 22, key: c.key) == .trusted)
        #expect(file.check(host: "node-77.lab", port: 22, key: c.key) == .unknown)
        #expect(file.check(host: "a.wild.example", port: 22, key: a.key) == .changed(known: [c.fingerprint]))
        // ssh-keygen -F (OpenSSH's own lookup) finds the hashed [127.0.0.1]:2222 line we trust.
        let found = try scratch.run("/usr/bin/ssh-keygen", ["-F", "[127.0.0.1]:2222", "-f", scratch.path("known_hosts")])
        #expect(found.contains(String(b.line.split(separator: " ")[1])))
    }

    @Test("known_hosts patterns: wildcard matching and port forms")
    func patterns() {
        #expect(KnownHosts.wildcardMatch(Array("*".utf8), Array("".utf8)))
        #expect(KnownHosts.wildcardMatch(Array("a*b?c".utf8), Array("axxbyc".utf8)))
        #expect(!KnownHosts.wildcardMatch(Array("a*b?c".utf8), Array("axxbc".utf8)))
        #expect(KnownHosts.wildcardMatch(Array("*.*.*".utf8), Array("a.b.c".utf8)))
        #expect(!KnownHosts.wildcardMatch(Array(String(repeating: "*a", count: 200).utf8), Array(String(repeating: "a", count: 199).utf8)))
        #expect(KnownHosts.wildcardMatch(Array("[10.0.0.?]:22*".utf8), Array("[10.0.0.5]:2222".utf8)))
        #expect(KnownHosts.lookupName(host: "Host", port: 22) == "host")
        #expect(KnownHosts.lookupName(host: "127.0.0.1", port: 2222) == "[127.0.0.1]:2222")
        #expect(KnownHosts.lookupName(host: "[::1]", port: 2222) == "[::1]:2222")
        #expect(KnownHosts.lookupName(host: "::1", port: 22) == "::1")
    }
}
