import NIOCore
import NIOEmbedded
import Testing

@testable import NetRunnerHTTP

/// ``AddressCappedChannel`` on `EmbeddedChannel`s: which connections are closed at accept, how
/// addresses count together, what the log says. (On a real socket, both servers:
/// `netrunnerTests`' `RequestBoundsTests`.)
@Suite("Connections per address on NIO's testing channel")
struct AddressConnectionCapTests {
    @Test("Cap 2: more from one address closed at accept, logged 1st, 2nd, 4th; a close makes room")
    func capOneAddress() throws {
        let loop = EmbeddedEventLoop()
        let inner = InnerChannel(http: false)
        let capped = AddressCappedChannel(inner: inner, layer: AddressConnectionCap(2))
        let log = LogLines()
        let connect = { (address: String) in try Wire(capped, loop: loop, from: address, logger: log.logger) }
        let first = try connect("192.0.2.1")
        let second = try connect("192.0.2.1")
        let refused = try (0..<5).map { _ in try connect("192.0.2.1") }
        #expect(first.isOpen && second.isOpen)
        #expect(refused.allSatisfy { !$0.isOpen })
        #expect(refused.allSatisfy { (try? $0.written()) == "" }, "a refused connection was answered")
        // Refused connections are set up all the same (a failed set-up would end the accept loop).
        #expect(inner.setupCount == 7)
        #expect(log.values("refused") == ["1", "2", "4"])
        #expect(log.messages.allSatisfy { $0.contains("from 192.0.2.1 closed at accept: 2 open") }, "\(log.messages)")
        #expect(try connect("192.0.2.2").isOpen, "another address is not capped")

        try first.channel.close().wait()
        loop.run()
        let third = try connect("192.0.2.1")
        #expect(third.isOpen, "a closed connection made no room")
        #expect(try !connect("192.0.2.1").isOpen)
        #expect(log.values("refused").count == 3, "the 6th refusal was logged")

        // No connection open from the address: its refusals count again from 1 (the total goes on).
        for wire in [second, third] { try wire.channel.close().wait() }
        loop.run()
        #expect(try connect("192.0.2.1").isOpen)
        #expect(try connect("192.0.2.1").isOpen)
        #expect(try !connect("192.0.2.1").isOpen)
        #expect(log.values("refused").last == "1")
        #expect(log.values("refused_in_all").last == "7")
    }

    @Test("Cap 1: an IPv6 /64 counts as one address, an IPv4-mapped address as its IPv4 one")
    func addressKeys() throws {
        let loop = EmbeddedEventLoop()
        let capped = AddressCappedChannel(inner: InnerChannel(http: false), layer: AddressConnectionCap(1))
        let open = { (address: String?) in try Wire(capped, loop: loop, from: address).isOpen }
        #expect(try open("2001:db8:0:1::5"))
        #expect(try !open("2001:db8:0:1:ffff::9"))
        #expect(try open("2001:db8:0:2::1"))
        #expect(try open("192.0.2.1"))
        #expect(try !open("::ffff:192.0.2.1"))
        #expect(try open("192.0.2.10"))
        // A Unix socket's connections have no address: never capped.
        #expect(try open(nil))
        #expect(try open(nil))
    }

    @Test("Cap 0: no cap")
    func noCap() throws {
        let loop = EmbeddedEventLoop()
        let capped = AddressCappedChannel(inner: InnerChannel(http: false), layer: AddressConnectionCap(0))
        let wires = try (0..<20).map { _ in try Wire(capped, loop: loop) }
        #expect(wires.allSatisfy { $0.isOpen })
    }
}
