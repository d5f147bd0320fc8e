import NIOCore
import NIOEmbedded
import Testing

@testable import NetRunnerHTTP

/// ``ConnectionBudget`` on `EmbeddedChannel`s sharing one loop and clock.
///
/// Which connection gives way, at which instant. `--max-connections 10`: from 9 open connections
/// on, a new one makes room down to 8. On a real socket, both servers: `netrunnerTests`'
/// `ConnectionBudgetTests`.
@Suite("Connection budget on NIO's testing channel")
struct ConnectionBudgetHandlerTests {
    let loop = EmbeddedEventLoop()
    let log = LogLines()
    let budgeted = BudgetedChannel(
        inner: RateFlooredChannel(inner: InnerChannel(), layer: RequestRateFloor(allowance: .seconds(900))),
        layer: ConnectionBudget(10))

    /// A connection from its own address.
    func connect(_ host: Int) throws -> Wire {
        try Wire(budgeted, loop: loop, from: "192.0.2.\(host)", logger: log.logger)
    }

    @Test("The longest idle gives way first; a request being handled, older still, is kept")
    func idleFirst() throws {
        let handled = try connect(100)
        try handled.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        var idle: [Wire] = []
        for host in 1...7 {
            loop.advanceTime(by: .seconds(1))
            idle.append(try connect(host))
        }
        loop.advanceTime(by: .seconds(1))
        let ninth = try connect(50)
        #expect(!idle[0].isOpen)
        #expect(idle[1...].allSatisfy { $0.isOpen } && handled.isOpen && ninth.isOpen)
        #expect(try idle[0].written() == "")
        loop.run()
        let tenth = try connect(51)
        #expect(!idle[1].isOpen, "the next longest idle was kept")
        #expect(idle[2...].allSatisfy { $0.isOpen } && handled.isOpen && tenth.isOpen)
        #expect(log.values("taken") == ["1", "2"])
        #expect(log.messages.allSatisfy { $0.contains("--max-connections 10; it was idle") }, "\(log.messages)")
    }

    @Test("With no idle one left, the slowest body gives way: 408 and closed")
    func slowestBody() throws {
        var reading: [Wire] = []
        for host in 1...7 {
            let wire = try connect(host)
            // 100, 200 … 700 bytes in the 10 s below: the first is the slowest.
            try wire.send(head(size: 100 * host, length: 100_000))
            wire.ask()
            reading.append(wire)
        }
        let idle = try connect(8)
        loop.advanceTime(by: .seconds(10))
        _ = try connect(9)
        #expect(!idle.isOpen, "an idle connection goes before any body")
        #expect(reading.allSatisfy { $0.isOpen })
        loop.run()
        _ = try connect(10)
        #expect(!reading[0].isOpen)
        let text = try reading[0].written()
        #expect(text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(text)")
        #expect(text.contains("too slowly for a server out of connections"), "\(text)")
        #expect(reading[1...].allSatisfy { $0.isOpen && (try? $0.written()) == "" })
        #expect(log.messages.last?.contains("its request had sent 100 bytes in 10000 ms") == true, "\(log.messages)")
    }

    @Test("Connections in their first second are kept; the budget looks again every 250 ms")
    func graceAndRetry() throws {
        let oldest = try connect(1)
        loop.advanceTime(by: .milliseconds(500))
        let young = try (2...9).map { try connect($0) }
        // 9 open, none a second old: nothing taken at 0.5 s, nor at the second look at 0.75 s.
        loop.advanceTime(by: .milliseconds(499))
        #expect(oldest.isOpen && young.allSatisfy { $0.isOpen })
        // The third look, at 1 s: the oldest is a second old.
        loop.advanceTime(by: .milliseconds(1))
        #expect(!oldest.isOpen)
        #expect(young.allSatisfy { $0.isOpen })
    }
}
