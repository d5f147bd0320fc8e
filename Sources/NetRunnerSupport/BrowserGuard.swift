/// Which browser requests a server answers: the `Origin` and `Host` checks `serve` and
/// `hub serve` share against cross-site requests and DNS rebinding.
///
/// - A request that carries an `Origin` (browsers send one on every cross-site request and on
///   every POST) is answered only when that origin is the server's own (the same host and port
///   as the `Host` it was addressed at: the page the server serves itself) or one allowed by
///   `--cors-origin`. Requests without `Origin` (curl, SDKs, other servers) are not affected.
/// - A server bound to loopback answers only loopback `Host` names (`localhost`, `127.0.0.1`,
///   `[::1]`, any port) and the names given with `--allowed-host`: a page whose name an attacker
///   points at 127.0.0.1 (DNS rebinding) is refused, since its requests carry that name.
package struct BrowserGuard: Sendable {
    /// Why a request is refused.
    package enum Refusal: Equatable, Sendable, CustomStringConvertible {
        /// The request's `Origin` is neither the server's own nor an allowed one.
        case foreignOrigin(String)
        /// The request was addressed at a name this server does not answer.
        case foreignHost(String)

        /// A message for the JSON error body.
        package var description: String {
            switch self {
            case .foreignOrigin(let origin):
                "Requests from pages of \(origin) are refused: start the server with --cors-origin \(origin) "
                    + "to allow them."
            case .foreignHost(let host):
                "This server does not answer the name \(host): start it with --allowed-host \(host) "
                    + "(a proxy in front of it forwards the name the client used)."
            }
        }
    }

    /// Origins allowed besides the server's own (`https://app.example.com`); `*`: any.
    package let origins: Set<String>
    /// The host names answered (lower case, no port), or `nil` for any.
    package let hosts: Set<String>?

    /// The names a loopback server always answers.
    package static let loopbackNames: Set<String> = ["localhost", "127.0.0.1", "::1"]

    /// Creates the guard of a server.
    ///
    /// - Parameters:
    ///   - origins: Origins allowed to call from their pages (`--cors-origin`); `*` for any.
    ///   - allowedHosts: Host names answered besides the loopback ones (`--allowed-host`).
    ///   - bindHost: The address the server binds: on loopback, or when `allowedHosts` is not
    ///     empty, only the loopback names and `allowedHosts` are answered.
    package init(origins: Set<String>, allowedHosts: Set<String>, bindHost: String) {
        self.origins = origins
        if Self.isLoopback(bindHost) || !allowedHosts.isEmpty {
            hosts = Self.loopbackNames.union(allowedHosts.map { Self.hostName($0) })
        } else {
            hosts = nil
        }
    }

    /// Whether an address to bind is this machine only (`127.0.0.0/8`, `::1`, `localhost`).
    package static func isLoopback(_ bindHost: String) -> Bool {
        let name = hostName(bindHost)
        return name == "localhost" || name == "::1" || name.hasPrefix("127.")
    }

    /// Whether a page of `origin` may read the answers (CORS): an allowed origin.
    package func allowsCrossOrigin(_ origin: String) -> Bool {
        origins.contains("*") || origins.contains(origin)
    }

    /// Why a request with these `Origin` and `Host` values is refused, or `nil` when it is
    /// answered.
    ///
    /// - Parameters:
    ///   - origin: The `Origin` header, if any.
    ///   - host: The `Host` header (the request's authority), if any.
    /// - Returns: The refusal, or `nil`.
    package func refusal(origin: String?, host: String?) -> Refusal? {
        if let hosts, let host {
            let name = Self.hostName(host)
            if !hosts.contains(name) { return .foreignHost(name) }
        }
        guard let origin else { return nil }
        if allowsCrossOrigin(origin) || Self.isSameOrigin(origin, host: host) { return nil }
        return .foreignOrigin(origin)
    }

    /// Whether `origin` (`scheme://host[:port]`) names the host and port of a `Host` header (a
    /// port left out is the scheme's default).
    package static func isSameOrigin(_ origin: String, host: String?) -> Bool {
        guard let host, let separator = origin.firstRange(of: "://") else { return false }
        let scheme = origin[..<separator.lowerBound].lowercased()
        let defaultPort: String
        switch scheme {
        case "http", "ws": defaultPort = "80"
        case "https", "wss": defaultPort = "443"
        default: return false
        }
        let (originName, originPort) = split(String(origin[separator.upperBound...]))
        let (hostName, hostPort) = split(host)
        return !originName.isEmpty && originName == hostName && (originPort ?? defaultPort) == (hostPort ?? defaultPort)
    }

    /// A host's name without its port or brackets, lower case, without a final dot.
    package static func hostName(_ host: String) -> String {
        var name = split(host).name
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }

    /// `name[:port]` or `[v6][:port]`, split; the name lower case.
    private static func split(_ authority: String) -> (name: String, port: String?) {
        let text = authority.lowercased()
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let name = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            return (name, rest.hasPrefix(":") ? String(rest.dropFirst()) : nil)
        }
        // A bare IPv6 address (more than one colon) has no port.
        if text.filter({ $0 == ":" }).count > 1 { return (text, nil) }
        if let colon = text.lastIndex(of: ":") {
            return (String(text[..<colon]), String(text[text.index(after: colon)...]))
        }
        return (text, nil)
    }
}
