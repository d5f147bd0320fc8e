import ArgumentParser
import NetRunnerCommandLine

/// The connection flags `serve` and `hub serve` share: the names a loopback server answers,
/// and the bounds on connections (idle time, a request's time, count, count per client address,
/// the drain on SIGTERM).
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .customLong("allowed-host"),
        help: ArgumentHelp(
            "A host name to answer besides localhost, 127.0.0.1 and [::1] (the public name a proxy forwards); requests addressed at another name are refused (421), against DNS rebinding; repeatable.",
            valueName: "name"))
    var allowedHosts: [String] = []

    @Option(
        name: .customLong("idle-timeout"), parsing: .unconditional,
        help:
            "Seconds a connection may stay idle, or take to send a request's headers, before it is closed; a request may take as long plus a second per 500 bytes it sends (408 past it)."
    )
    var idleTimeout = 60

    @Option(
        name: .customLong("request-timeout"), parsing: .unconditional,
        help:
            "Seconds a request may take, from its first byte until its body is read whole, however fast it comes (408 past it); 0: no bound (default: 300 for serve, 3600 for hub serve)."
    )
    var requestTimeout: Int?

    @Option(
        name: .customLong("max-connections"), parsing: .unconditional,
        help:
            "Connections open at once; more wait to be accepted. From nine tenths of it on, a new connection makes room: the connections idle longest, then the slowest request bodies (408), are closed."
    )
    var maximumConnections = 512

    @Option(
        name: .customLong("max-connections-per-address"), parsing: .unconditional,
        help:
            "Connections open at once from one client address (IPv6: one /64); more are closed at accept. Behind a proxy every connection comes from the proxy: raise it, or 0 for no cap."
    )
    var maximumConnectionsPerAddress = 64

    @Option(
        name: .customLong("drain-timeout"), parsing: .unconditional,
        help: "On SIGTERM or Ctrl-C, seconds the requests in flight may take before they are cut.")
    var drainTimeout = 20

    func validate() throws {
        try OptionLimits.check(idleTimeout, "--idle-timeout", in: 1...3600)
        try OptionLimits.check(maximumConnections, "--max-connections", in: 1...65_536)
        try OptionLimits.check(maximumConnectionsPerAddress, "--max-connections-per-address", in: 0...65_536)
        if let requestTimeout { try OptionLimits.check(requestTimeout, "--request-timeout", in: 0...86_400) }
        try OptionLimits.check(drainTimeout, "--drain-timeout", in: 0...3600)
        for name in allowedHosts {
            let valid = name.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-.:[]".unicodeScalars.contains($0))
            }
            guard !name.isEmpty, valid else {
                throw ValidationError("--allowed-host takes a host name (app.example.com) or address, not \"\(name)\".")
            }
        }
    }

    /// `--idle-timeout`.
    var idle: Duration { .seconds(idleTimeout) }
    /// `--drain-timeout`.
    var drain: Duration { .seconds(drainTimeout) }

    /// `--request-timeout` (0: `nil`, no bound), or `fallback` (the server's default) without it.
    func request(or fallback: Duration?) -> Duration? {
        guard let requestTimeout else { return fallback }
        return requestTimeout == 0 ? nil : .seconds(requestTimeout)
    }
}
