import ArgumentParser
import NetRunnerCommandLine

/// The connection flags `serve` and `hub serve` share: the names a loopback server answers,
/// and the bounds on connections (idle time, count, the drain on SIGTERM).
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
        name: .customLong("max-connections"), parsing: .unconditional,
        help: "Connections open at once; more wait to be accepted until one closes.")
    var maximumConnections = 512

    @Option(
        name: .customLong("drain-timeout"), parsing: .unconditional,
        help: "On SIGTERM or Ctrl-C, seconds the requests in flight may take before they are cut.")
    var drainTimeout = 20

    func validate() throws {
        try OptionLimits.check(idleTimeout, "--idle-timeout", in: 1...3600)
        try OptionLimits.check(maximumConnections, "--max-connections", in: 1...65_536)
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
}
