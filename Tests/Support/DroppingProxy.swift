import Foundation

/// A TCP proxy on 127.0.0.1 in front of a test server that cuts one connection once it has carried
/// `dropAfter` bytes in either direction: a server that dies mid-transfer, for fault tests.
public final class DroppingProxy: @unchecked Sendable {
    /// The port to connect to instead of the server's.
    public let port: Int
    private let listener: Int32
    private let targetPort: Int
    private let dropAfter: Int
    private let lock = NSLock()
    private var dropped = 0
    private var maxDrops: Int
    private var sockets: [Int32] = []
    private var refusing = false
    private var holdAfter: Int?
    private var holdTotalAfter: Int?
    private var clientBytes = 0
    private var holdDownloadsAfter: Int?
    private var serverBytes = 0
    private var passed = 0
    private var turnedAway = 0
    private var holds = 0

    /// The number of connections cut so far.
    public var drops: Int { lock.withLock { dropped } }
    /// Connections let through to the server so far.
    public var accepted: Int { lock.withLock { passed } }
    /// Times a client's bytes were held back (``setHolding(after:)``) so far.
    public var held: Int { lock.withLock { holds } }
    /// Connections cut at once because the proxy was refusing (``setRefusing(_:)``).
    public var refused: Int { lock.withLock { turnedAway } }

    /// Starts the proxy in front of `targetPort`.
    public init(targetPort: Int, dropAfter: Int, maxDrops: Int = 1) throws {
        self.targetPort = targetPort
        self.dropAfter = dropAfter
        self.maxDrops = maxDrops
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        guard ok else { throw CocoaError(.fileWriteUnknown) }
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                close(listener)  // here, not in stop(): see LoopbackServer
                return
            }
            if lock.withLock({ () -> Bool in
                if refusing { turnedAway += 1 }
                return refusing
            }) {
                // A reset at once, as from a host whose server is down.
                var linger = linger(l_onoff: 1, l_linger: 0)
                setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
                close(client)
                continue
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard connected else { close(client); close(server); continue }
            lock.withLock {
                sockets += [client, server]
                passed += 1
            }
            let budget = Budget(limit: dropAfter)
            Thread.detachNewThread { [self] in pump(from: client, to: server, budget: budget, holdable: true); finished(budget, client, server) }
            Thread.detachNewThread { [self] in pump(from: server, to: client, budget: budget, download: true); finished(budget, client, server) }
        }
    }

    /// Bytes a connection may still carry before it is cut (when cuts remain).
    final class Budget: @unchecked Sendable {
        let lock = NSLock()
        var used = 0
        var running = 2
        let limit: Int
        init(limit: Int) { self.limit = limit }
    }

    /// The last pump of a connection closes both sockets (with a reset, after a cut).
    private func finished(_ budget: Budget, _ client: Int32, _ server: Int32) {
        let last = budget.lock.withLock { () -> Bool in
            budget.running -= 1
            return budget.running == 0
        }
        if last {
            close(client)
            close(server)
        }
    }

    private func pump(from source: Int32, to target: Int32, budget: Budget, holdable: Bool = false, download: Bool = false) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var forwarded = 0
        while true {
            // Held: nothing more is read from a client that sent that much, so its sends stall
            // once the socket buffers are full (a server that stopped taking an upload).
            var holding = false
            while lock.withLock({
                (holdable && (holdAfter.map { forwarded >= $0 } ?? false || holdTotalAfter.map { clientBytes >= $0 } ?? false))
                    || (download && holdDownloadsAfter.map { serverBytes >= $0 } ?? false)
            }) {
                if !holding {
                    holding = true
                    lock.withLock { holds += 1 }
                }
                usleep(5000)
            }
            let count = read(source, &buffer, buffer.count)
            forwarded += max(0, count)
            if holdable, count > 0 { lock.withLock { clientBytes += count } }
            if download, count > 0 { lock.withLock { serverBytes += count } }
            if count <= 0 { break }
            let exceeded = budget.lock.withLock { () -> Bool in
                budget.used += count
                return budget.used > budget.limit
            }
            if exceeded {
                let cut = lock.withLock { () -> Bool in
                    guard dropped < maxDrops else { return false }
                    dropped += 1
                    return true
                }
                if cut {
                    // A hard reset, as when a server process dies.
                    var linger = linger(l_onoff: 1, l_linger: 0)
                    setsockopt(source, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
                    setsockopt(target, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
                    // Wake the other direction; the last one out closes both, which sends the resets.
                    shutdown(source, Int32(SHUT_RD))
                    shutdown(target, Int32(SHUT_RD))
                    return
                }
            }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { send(target, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { return }
                offset += written
            }
        }
        shutdown(target, Int32(SHUT_WR))
    }

    /// Cuts every connection open right now (as a server restart would); later ones pass.
    public func cutAll() {
        let open = lock.withLock { () -> [Int32] in
            let current = sockets
            sockets.removeAll()
            return current
        }
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// While `true`, every connection is cut (the open ones at once, new ones as they arrive): an
    /// outage; `false` lets connections pass again.
    public func setRefusing(_ refuse: Bool) {
        lock.withLock { refusing = refuse }
        if refuse { cutAll() }
    }

    /// While set, a connection whose client sent `bytes` is passed nothing more from it (nor read
    /// from): a large upload stalls, small requests go through; `nil` lets everything pass again.
    public func setHolding(after bytes: Int?) {
        lock.withLock { holdAfter = bytes }
    }

    /// While set, once clients sent `bytes` over all connections together, nothing more is taken
    /// from any of them (every upload stalls, wherever it is); `nil` lets everything pass again.
    public func setHolding(afterTotal bytes: Int?) {
        lock.withLock { holdTotalAfter = bytes }
    }

    /// While set, once the server sent `bytes` over all connections together, nothing more of its
    /// answers is passed on (every download stalls, wherever it is); `nil` lets everything pass again.
    public func setHoldingDownloads(afterTotal bytes: Int?) {
        lock.withLock { holdDownloadsAfter = bytes }
    }

    /// Stops accepting and cuts every connection.
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))  // wakes the accept loop, which closes it
        lock.withLock { for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) } }
    }
}
