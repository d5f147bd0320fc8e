package import HummingbirdCore
package import Logging
package import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The most connections one client address may hold open at once (`--max-connections-per-address`).
///
/// `--max-connections` bounds them all; without a bound per address, one client (a few hundred
/// uploads sent just above the rate floor) holds every slot and locks everyone else out. A
/// connection over the cap is closed as soon as it is accepted, before anything of it is read
/// (the client sees the connection closed, no answer), and counted; the log says so for the
/// 1st, 2nd, 4th, 8th… refusal since the address last had no connection open.
///
/// IPv4 addresses (IPv4-mapped IPv6 ones too) count one by one, IPv6 addresses by their /64
/// network (what one host is usually given). Behind a proxy every connection comes from the
/// proxy's address: the cap must be raised there, or be 0 (none).
package final class AddressConnectionCap: Sendable {
    /// The most connections from one address; 0: no cap.
    package let limit: Int
    private let state = Mutex(State())

    private struct State {
        /// The open connections and the refusals (since the address last had none open) of
        /// each address with open connections.
        var addresses: [String: (open: Int, refused: Int)] = [:]
        /// The connections refused since the start.
        var refused = 0
    }

    /// A cap.
    ///
    /// - Parameter limit: The most connections from one address; 0 or less: no cap.
    package init(_ limit: Int) {
        self.limit = max(0, limit)
    }

    /// Counts a connection from `address` if it is under the cap.
    ///
    /// - Parameter address: The address's key.
    /// - Returns: `nil` when admitted (``release(_:)`` it when it closes); else the refusals,
    ///   this one included: the address's since it last had none open, and all since the start.
    func admit(_ address: String) -> (address: Int, total: Int)? {
        state.withLock { state in
            var entry = state.addresses[address] ?? (0, 0)
            guard limit == 0 || entry.open < limit else {
                entry.refused += 1
                state.refused += 1
                state.addresses[address] = entry
                return (entry.refused, state.refused)
            }
            entry.open += 1
            state.addresses[address] = entry
            return nil
        }
    }

    /// Uncounts an admitted connection that has closed.
    ///
    /// - Parameter address: The address's key.
    func release(_ address: String) {
        state.withLock { state in
            guard var entry = state.addresses[address] else { return }
            entry.open -= 1
            state.addresses[address] = entry.open > 0 ? entry : nil
        }
    }

    /// The key a connection from `address` counts under (``key(ipAddress:)``); `nil` (not
    /// counted) for a Unix socket.
    ///
    /// - Parameter address: The client's address.
    /// - Returns: The key.
    package static func key(_ address: SocketAddress?) -> String? {
        switch address {
        case .v4?, .v6?: address?.ipAddress.map(key(ipAddress:))
        default: nil
        }
    }

    /// The key a connection from an IP address counts under: an IPv4 address itself, the /64
    /// network of an IPv6 one (`2001:db8:0:1::/64`), an IPv4-mapped IPv6 one as IPv4.
    ///
    /// - Parameter text: The address, as `inet_ntop` writes it.
    /// - Returns: The key; `text` itself when it is no IPv6 address.
    package static func key(ipAddress text: String) -> String {
        var raw = in6_addr()
        guard text.contains(":"), inet_pton(AF_INET6, text, &raw) == 1 else { return text }
        let bytes = withUnsafeBytes(of: raw) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map {
            String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
        }
        return groups.joined(separator: ":") + "::/64"
    }
}

/// A child channel behind ``AddressConnectionCap``: a connection over its address's cap is
/// closed at once, the rest are counted until they close.
package typealias AddressCappedChannel<Inner: ServerChildChannel> = LayeredChannel<Inner, AddressConnectionCap>

extension AddressConnectionCap: ChannelLayer {
    /// Closes a connection over its address's cap as it becomes active, and counts the others
    /// until they close.
    package func setup<Inner: ServerChildChannel>(
        channel: any Channel, logger: Logger, inner: Inner
    ) -> EventLoopFuture<Inner.Value> {
        if limit > 0, let address = AddressConnectionCap.key(channel.remoteAddress) {
            if let refusals = admit(address) {
                // Set up as any connection (a failed set-up would end the server's accept loop),
                // but closed as it becomes active, nothing read.
                do {
                    try channel.pipeline.syncOperations.addHandler(RefusedConnection(), position: .first)
                } catch {
                    channel.close(promise: nil)
                }
                if refusals.address & (refusals.address - 1) == 0 {
                    // The 1st, 2nd, 4th… since the address last had none open: a flood logs little.
                    logger.notice(
                        "connection from \(address) closed at accept: \(limit) open from that address already (--max-connections-per-address)",
                        metadata: ["refused": "\(refusals.address)", "refused_in_all": "\(refusals.total)"])
                }
            } else {
                channel.closeFuture.whenComplete { _ in self.release(address) }
            }
        }
        return inner.setup(channel: channel, logger: logger)
    }
}

/// The front of a connection refused by ``AddressConnectionCap``: closes it as it becomes
/// active, and passes nothing on.
final class RefusedConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { context.close(promise: nil) }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
