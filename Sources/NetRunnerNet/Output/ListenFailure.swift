import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A server that could not listen on its address, said as what to do.
///
/// The message names the address and port, and the flag that changes them; NIO's own words
/// were `bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)`.
struct ListenFailure: Error, CustomStringConvertible {
    /// The one-line message.
    let description: String

    /// The message for a bind that failed with `errno`, or `nil` for another error.
    ///
    /// - Parameters:
    ///   - errno: The error number of the failed `bind(2)`.
    ///   - command: The command, as typed (`netrunner serve`).
    ///   - host: The address asked for (`--host`).
    ///   - port: The port asked for (`--port`).
    init?(errno: CInt, command: String, host: String, port: Int) {
        let address = (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        let otherPort = port == 65_535 || port == 0 ? 8080 : port + 1
        let choose =
            "choose another with --port (--port \(otherPort)), or --port 0 for any free port (printed at start)"
        switch errno {
        case EADDRINUSE:
            description =
                "\(command) cannot listen on \(address): the port is already in use (another server, or an earlier "
                + "\(command) still running); stop that one, or \(choose)."
        case EACCES:
            description =
                "\(command) cannot listen on \(address): ports below 1024 need root (or CAP_NET_BIND_SERVICE); "
                + "\(choose)."
        case EADDRNOTAVAIL:
            description =
                "\(command) cannot listen on \(address): no network interface of this machine has the address "
                + "\(host); use --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)."
        default:
            return nil
        }
    }

    /// Runs a server, turning a failed bind into a ``ListenFailure``; other errors pass through.
    ///
    /// - Parameters:
    ///   - command: The command, as typed (`netrunner serve`).
    ///   - host: The address asked for (`--host`).
    ///   - port: The port asked for (`--port`).
    ///   - server: Runs the server until it stops.
    /// - Throws: A ``ListenFailure``, or what `server` throws.
    static func explaining(
        _ command: String, host: String, port: Int, _ server: () async throws -> Void
    ) async throws {
        do {
            try await server()
        } catch let error as IOError where "\(error)".contains("bind(") {
            guard let failure = ListenFailure(errno: error.errnoCode, command: command, host: host, port: port) else {
                throw error
            }
            throw failure
        }
    }
}
