import CCurl
import GatewayCore

/// The time rules every libcurl transfer of ours follows, HTTP and FTP alike.
public struct TransferTimeouts: Sendable, Hashable {
    /// Time allowed to establish a connection (FTP: and to log in).
    public var connect: Duration
    /// A transfer that moves no byte for this long fails with a time-out (a stalled server never
    /// hangs us). Checked by ``CurlTransfer``'s progress callback.
    public var idle: Duration
    /// Bytes per second a transfer must average over ``lowSpeedTime``, or it fails with a time-out:
    /// a server that drips a body (a byte a second) or an endless listing is cut off. 0 turns the
    /// rule off.
    public var lowSpeedLimit: Int
    /// The window ``lowSpeedLimit`` is averaged over.
    public var lowSpeedTime: Duration

    /// Creates the rules; the defaults are 15 s to connect, 60 s idle, at least 1 KiB/s over any 60 s.
    public init(connect: Duration = .seconds(15), idle: Duration = .seconds(60), lowSpeedLimit: Int = 1024,
                lowSpeedTime: Duration = .seconds(60)) {
        self.connect = connect
        self.idle = idle
        self.lowSpeedLimit = max(0, lowSpeedLimit)
        self.lowSpeedTime = lowSpeedTime
    }

    /// Whole milliseconds of a duration, at least 1 and at most a day (the bound config validation
    /// sets, ``RemoteConfiguration/maximumSeconds``): libcurl takes `long`s, and a 1e16 s given
    /// through the library must not overflow on the way there either.
    static func milliseconds(_ duration: Duration) -> Int {
        let seconds = min(max(duration.components.seconds, 0), Int64(RemoteConfiguration.maximumSeconds))
        return max(1, Int(seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000))
    }

    /// Whole seconds, rounded up, at least 1 (libcurl counts these options in seconds).
    static func seconds(_ duration: Duration) -> Int {
        (milliseconds(duration) + 999) / 1000
    }
}

/// A client configuration that carries ``TransferTimeouts`` (HTTP's and FTP's), with shortcuts to
/// its two most used rules.
public protocol TransferTimeoutsConfiguration {
    /// Connect, idle and low-speed rules.
    var timeouts: TransferTimeouts { get set }
}

extension TransferTimeoutsConfiguration {
    /// Time allowed to connect (FTP: and to log in): ``TransferTimeouts/connect``.
    public var connectTimeout: Duration {
        get { timeouts.connect }
        set { timeouts.connect = newValue }
    }

    /// A transfer (or an FTP reply) that moves no byte for this long fails with a time-out:
    /// ``TransferTimeouts/idle``.
    public var idleTimeout: Duration {
        get { timeouts.idle }
        set { timeouts.idle = newValue }
    }
}

extension CurlEasy {
    /// Sets the connect time-out and the low-speed rule; the idle rule is the transfer's (its
    /// progress callback), since libcurl has one low-speed rule only.
    func set(_ timeouts: TransferTimeouts) throws {
        try set(CURLOPT_CONNECTTIMEOUT_MS, TransferTimeouts.milliseconds(timeouts.connect))
        if timeouts.lowSpeedLimit > 0 {
            try set(CURLOPT_LOW_SPEED_LIMIT, timeouts.lowSpeedLimit)
            try set(CURLOPT_LOW_SPEED_TIME, TransferTimeouts.seconds(timeouts.lowSpeedTime))
        }
    }
}
