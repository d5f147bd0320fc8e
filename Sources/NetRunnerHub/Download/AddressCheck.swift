import FoundationEssentials
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which hosts an import may download from: against server-side request forgery, by default only
/// public addresses, never this machine or its networks (loopback, private, link-local, CGNAT,
/// unspecified, multicast, broadcast and reserved addresses, in IPv4 and IPv6, IPv4 addresses
/// written inside IPv6 ones included).
///
/// A host name is resolved here (getaddrinfo, as the HTTP client would) and every address it has
/// is checked; the connection then goes to the checked address (the HTTP client's DNS override,
/// which keeps the name for `Host` and TLS), so a name that resolves differently a moment later
/// (DNS rebinding) cannot move it. Each redirect is checked the same way before it is followed.
package struct AddressCheck: Sendable {
    /// Whether private and loopback addresses are allowed (`--allow-private-imports`).
    package var allowsPrivate: Bool
    /// Hosts (as a URL writes them) taken as public whatever they resolve to: for tests, whose
    /// servers are all on loopback.
    package var publicHosts: Set<String> = []

    /// Creates a check.
    ///
    /// - Parameter allowsPrivate: Whether private and loopback addresses are allowed.
    package init(allowsPrivate: Bool) {
        self.allowsPrivate = allowsPrivate
    }

    /// Where to connect for a URL.
    package struct Target: Sendable, Equatable {
        /// The DNS override for the HTTP client (host name -> checked address); empty when the
        /// host is an address already, or when private addresses are allowed.
        package var dnsOverride: [String: String] = [:]
    }

    /// Checks the host of an http(s) URL.
    ///
    /// - Parameters:
    ///   - url: The URL to connect to.
    ///   - source: The URL the import was given (masked), for messages.
    ///   - redirected: Whether `url` is a redirect's target (said in the message).
    /// - Returns: Where to connect.
    /// - Throws: ``ImportError/badSource(source:reason:)`` for a host that is not public or
    ///   cannot be resolved.
    package func target(for url: String, source: String, redirected: Bool) async throws(ImportError) -> Target {
        guard let host = Self.host(of: url) else {
            throw .badSource(source: source, reason: "it is not a valid http(s) URL (no host)")
        }
        if allowsPrivate || publicHosts.contains(host) { return Target() }
        let named = redirected ? "it redirects to \(URLCredentials.masked(url)), whose host" : "its host"
        if let literal = Self.literalAddress(host) {
            if let kind = Self.nonPublicKind(literal) {
                throw .badSource(source: source, reason: Self.refusal(named, host: host, address: nil, kind: kind))
            }
            return Target()
        }
        // IPv4 first, in the checks (the first refused is named) and in the choice of the address
        // to connect to (IPv4 is reachable nearly everywhere; a container may have no IPv6 route).
        let resolved = try await offloaded { () throws(ImportError) in
            do {
                let all = try Self.resolve(host)
                return all.filter { $0.count == 4 } + all.filter { $0.count != 4 }
            } catch {
                throw ImportError.badSource(source: source, reason: "\(named) \(host) \(error)")
            }
        }
        for address in resolved {
            if let kind = Self.nonPublicKind(address) {
                throw .badSource(
                    source: source,
                    reason: Self.refusal(named, host: host, address: Self.text(address), kind: kind))
            }
        }
        guard let chosen = resolved.first else {
            throw .badSource(source: source, reason: "\(named) \(host) has no address")
        }
        return Target(dnsOverride: [host: Self.text(chosen)])
    }

    /// The refusal's reason.
    private static func refusal(_ named: String, host: String, address: String?, kind: String) -> String {
        let pointsAt = address.map { "\(host) (\($0))" } ?? host
        return "\(named) \(pointsAt) is \(kind), and imports from loopback, private, link-local and other "
            + "non-public addresses are refused (--allow-private-imports allows them)"
    }

    /// The host as the HTTP client reads it (Foundation's URL, IPv6 brackets removed), or `nil`.
    static func host(of url: String) -> String? {
        guard let parsed = URL(string: url), var host = parsed.host, !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }

    /// The bytes of an IPv4 or IPv6 address written as one (what the HTTP client connects to
    /// without resolving), or `nil` for a name.
    static func literalAddress(_ host: String) -> [UInt8]? {
        var four = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, host, &four) == 1 { return four }
        var sixteen = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, host, &sixteen) == 1 { return sixteen }
        return nil
    }

    /// Every address of a name (getaddrinfo, which also reads `2130706433` or `0177.0.0.1` as
    /// addresses, as the HTTP client's resolver does).
    static func resolve(_ host: String) throws(ResolutionError) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            throw ResolutionError(message: "cannot be resolved (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(first) }
        var addresses: [[UInt8]] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let socketAddress = current.pointee.ai_addr {
                switch Int32(current.pointee.ai_family) {
                case AF_INET:
                    socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        var value = $0.pointee.sin_addr
                        addresses.append(withUnsafeBytes(of: &value) { Array($0) })
                    }
                case AF_INET6:
                    socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        var value = $0.pointee.sin6_addr
                        addresses.append(withUnsafeBytes(of: &value) { Array($0) })
                    }
                default: break
                }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw ResolutionError(message: "has no IPv4 or IPv6 address") }
        return addresses
    }

    /// Why a name could not be resolved.
    struct ResolutionError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// What kind of non-public address it is (`"a loopback address"`...), or `nil` for a public one.
    static func nonPublicKind(_ address: [UInt8]) -> String? {
        if address.count == 4 { return nonPublicKind(v4: address) }
        guard address.count == 16 else { return "not an IP address" }
        let a = address
        if a.allSatisfy({ $0 == 0 }) { return "the unspecified address" }
        if a[0..<15].allSatisfy({ $0 == 0 }) && a[15] == 1 { return "a loopback address" }
        // IPv4 inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d).
        if a[0..<10].allSatisfy({ $0 == 0 }) && a[10] == 0xff && a[11] == 0xff {
            return nonPublicKind(v4: Array(a[12..<16])).map { $0 + " (IPv4-mapped)" }
        }
        if a[0..<12].allSatisfy({ $0 == 0 }) { return nonPublicKind(v4: Array(a[12..<16])) ?? "a reserved address" }
        if a[0..<12] == [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] {
            return nonPublicKind(v4: Array(a[12..<16])).map { $0 + " (NAT64)" }
        }
        if a[0] == 0 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b { return "a private address (local NAT64)" }
        // 6to4 (2002:a.b.c.d::/48) carries an IPv4 address too.
        if a[0] == 0x20 && a[1] == 0x02, let kind = nonPublicKind(v4: Array(a[2..<6])) { return kind + " (6to4)" }
        if a[0] == 0xfe && a[1] & 0xc0 == 0x80 { return "a link-local address" }
        if a[0] == 0xfe && a[1] & 0xc0 == 0xc0 { return "a private address (site-local)" }
        if a[0] & 0xfe == 0xfc { return "a private address (unique local)" }
        if a[0] == 0xff { return "a multicast address" }
        return nil
    }

    private static func nonPublicKind(v4 a: [UInt8]) -> String? {
        switch (a[0], a[1]) {
        case (0, _): return "the unspecified address"
        case (127, _): return "a loopback address"
        case (10, _), (172, 16...31), (192, 168): return "a private address"
        case (169, 254): return "a link-local address"
        case (100, 64...127): return "a shared address (carrier-grade NAT)"
        case (224...239, _): return "a multicast address"
        case (255, 255) where a[2] == 255 && a[3] == 255: return "the broadcast address"
        case (240...255, _): return "a reserved address"
        case (192, 0) where a[2] == 0: return "a reserved address (IETF protocol assignments)"
        case (198, 18...19): return "a reserved address (benchmarking)"
        default: return nil
        }
    }

    /// An address as text (`127.0.0.1`, `::1`).
    static func text(_ address: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = address.count == 4 ? AF_INET : AF_INET6
        let written = address.withUnsafeBytes { bytes in
            inet_ntop(family, bytes.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
