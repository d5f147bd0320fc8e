import HTTPTypes
import NIOCore
import NIOEmbedded
import Testing

@testable import NetRunnerHTTP

/// ``RequestRateFloor``'s guard and watcher around the HTTP/1.1 codec, on an `EmbeddedChannel`.
///
/// The tests move the channel's clock: each decision at its exact instant. The floor here: 10 s
/// allowance, 500 bytes earn a second. The same floor on a real socket, both servers:
/// `netrunnerTests`' `RequestRateTests` and `RequestBoundsTests`.
@Suite("Request rate floor on NIO's testing channel")
struct RequestRateFloorTests {
    static let floor = RequestRateFloor(allowance: .seconds(10))

    /// The 408 the floor writes, and the connection closed after it.
    static func expectTimeout(_ wire: Wire, _ why: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let text = try wire.written()
        #expect(text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(text)", sourceLocation: sourceLocation)
        #expect(text.contains("\r\nConnection: close\r\n"), "\(text)", sourceLocation: sourceLocation)
        #expect(text.contains("the request \(why)."), "\(text)", sourceLocation: sourceLocation)
        #expect(!wire.isOpen, "still open after its 408", sourceLocation: sourceLocation)
    }

    @Test("A 500-byte head and no body: cut at 10 s + 1 s, not a millisecond before")
    func slowBody() throws {
        let wire = try Wire.floored(Self.floor)
        try wire.send(head(size: 500, length: 1000))
        #expect(try wire.parts().count == 1)
        wire.ask()
        wire.advance(.milliseconds(10_999))
        #expect(wire.isOpen)
        #expect(try wire.written() == "")
        wire.advance(.milliseconds(1))
        try Self.expectTimeout(wire, "came too slowly")
    }

    @Test("Only the server's waiting counts: an hour not reading, twice, costs the request nothing")
    func serverTimeIsFree() throws {
        let wire = try Wire.floored(Self.floor)
        try wire.send(head(size: 500, length: 1000))
        // No read asked (a handler not reading yet): the clock stands.
        wire.advance(.seconds(3600))
        #expect(wire.isOpen)
        wire.ask()
        wire.advance(.seconds(5))
        try wire.send(String(repeating: "b", count: 500))  // 1000 bytes: 12 s in all, 5 spent
        wire.advance(.seconds(3600))
        #expect(wire.isOpen)
        #expect(try wire.written() == "")
        wire.ask()
        wire.advance(.milliseconds(6_999))
        #expect(wire.isOpen)
        wire.advance(.milliseconds(1))
        try Self.expectTimeout(wire, "came too slowly")
    }

    @Test("--request-timeout 3: a body at 5 kB/s, ten times the floor, is cut after 3 s of waiting for it")
    func wholeRequestLimit() throws {
        let wire = try Wire.floored(RequestRateFloor(allowance: .seconds(10), limit: .seconds(3)))
        try wire.send(head(size: 500, length: 100_000))
        var sent = 0
        for _ in 0..<40 {
            wire.ask()
            wire.advance(.milliseconds(100))
            guard wire.isOpen else { break }
            try wire.send(String(repeating: "b", count: 500))
            sent += 1
        }
        // Cut during the 30th wait: 29 pieces of 100 ms, then the last 100 ms.
        #expect(sent == 29)
        try Self.expectTimeout(wire, "took too long")
    }

    @Test("Idle: a connection with no request is closed at the allowance; a request being handled is not idle")
    func idleTimeout() throws {
        let quiet = try Wire.floored(Self.floor)
        quiet.advance(.milliseconds(9_999))
        #expect(quiet.isOpen)
        quiet.advance(.milliseconds(1))
        #expect(!quiet.isOpen)
        #expect(try quiet.written() == "")

        let handled = try Wire.floored(Self.floor)
        try handled.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try handled.parts().count == 2)
        handled.advance(.seconds(3600))
        #expect(handled.isOpen, "closed while its request was being handled")
        try handled.answer(.ok, body: "hi")
        #expect(try handled.written().hasPrefix("HTTP/1.1 200 OK\r\n"))
        handled.advance(.milliseconds(9_999))
        #expect(handled.isOpen)
        handled.advance(.milliseconds(1))
        #expect(!handled.isOpen)
    }

    @Test("A request whose answer has started is closed at the floor without a 408")
    func answerStarted() throws {
        let wire = try Wire.floored(Self.floor)
        try wire.send(head(size: 500, length: 1000))
        try wire.answer(.ok, body: "early", end: false)
        wire.ask()
        wire.advance(.seconds(11))
        let text = try wire.written()
        #expect(!wire.isOpen)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n") && !text.contains("408"), "\(text)")
    }

    @Test("An answer saying Connection: close closes the connection, its body unread; keep-alive does not")
    func connectionClose() throws {
        let wire = try Wire.floored(Self.floor)
        try wire.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        try wire.answer(.ok, body: "one")
        #expect(wire.isOpen)
        try wire.send(head(size: 200, length: 5000))
        try wire.answer(.unauthorized, [.connection: "keep-alive, Close"])
        let text = try wire.written()
        #expect(text.contains("HTTP/1.1 401 Unauthorized\r\n"), "\(text)")
        #expect(!wire.isOpen)
    }

    @Test("Waiting for 100 Continue stops the clock; it runs again from the 100")
    func continueHoldsTheClock() throws {
        let wire = try Wire.floored(Self.floor)
        try wire.send(head(size: 500, length: 1000, more: "Expect: 100-continue\r\n"))
        wire.ask()
        wire.advance(.seconds(3600))
        #expect(wire.isOpen)
        #expect(try wire.written() == "")
        try wire.handler(ContinueHandler.self).bodyWanted()
        #expect(try wire.written() == "HTTP/1.1 100 Continue\r\n\r\n")
        wire.advance(.milliseconds(10_999))
        #expect(wire.isOpen)
        wire.advance(.milliseconds(1))
        try Self.expectTimeout(wire, "came too slowly")
    }

    @Test("The time a request may take: the allowance, a second per 500 bytes, at most the limit")
    func allowances() {
        let floor = RequestRateFloor(allowance: .seconds(10), limit: .seconds(300))
        #expect(floor.limit(after: 0) == .seconds(10))
        #expect(floor.limit(after: 250) == .milliseconds(10_500))
        #expect(floor.limit(after: 1_000_000) == .seconds(300))
        #expect(!floor.isPastLimit(after: 144_999) && floor.isPastLimit(after: 145_001))
        // No overflow for the largest counts; a rate of 0 is 1 byte a second.
        #expect(floor.allowance(after: .max) == .nanoseconds(.max))
        #expect(RequestRateFloor(allowance: .zero, bytesPerSecond: 0).limit(after: 7) == .seconds(7))
    }
}
