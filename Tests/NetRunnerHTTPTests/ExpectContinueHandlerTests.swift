import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import NetRunnerHTTP

/// ``ExpectContinue``'s handler after the HTTP/1 decoder, on an `EmbeddedChannel` (the servers'
/// pipeline, set up by ``RateFlooredChannel``): when `100 Continue` goes out, and what an answer
/// made instead of it does. (On a real socket, with curl: `netrunnerTests`' `ExpectContinueTests`.)
@Suite("Expect: 100-continue on NIO's testing channel")
struct ExpectContinueHandlerTests {
    static let floor = RequestRateFloor(allowance: .seconds(900))
    static let continued = "HTTP/1.1 100 Continue\r\n\r\n"

    @Test("One 100 Continue when the body is first wanted, then the answer; the connection stays open")
    func continueOnce() throws {
        let wire = try Wire.floored(Self.floor)
        try wire.send(head(size: 300, length: 10, more: "Expect: 100-continue\r\n"))
        #expect(try wire.written() == "", "a 100 before the body was wanted")
        let handler = try wire.handler(ContinueHandler.self)
        handler.bodyWanted()
        handler.bodyWanted()
        #expect(try wire.written() == Self.continued)
        try wire.send("0123456789")
        #expect(try wire.parts().count == 3)
        try wire.answer(.ok, body: "done")
        let text = try wire.written()
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n") && !text.lowercased().contains("connection: close"), "\(text)")
        #expect(wire.isOpen)
    }

    @Test("A final answer instead of the 100 says Connection: close and closes the connection")
    func refusalCloses() throws {
        let wire = try Wire.floored(Self.floor)
        try wire.send(head(size: 300, length: 5_000_000, more: "Expect: 100-continue\r\n"))
        try wire.answer(.contentTooLarge, body: "too large")
        let text = try wire.written()
        #expect(text.hasPrefix("HTTP/1.1 413 "), "\(text)")
        #expect(text.lowercased().contains("\r\nconnection: close\r\n"), "\(text)")
        #expect(!text.contains("100 Continue"), "\(text)")
        #expect(!wire.isOpen)
    }

    @Test("Never a 100 to HTTP/1.0, nor once the body came without it")
    func noContinue() throws {
        let old = try Wire.floored(Self.floor)
        try old.send("POST /u HTTP/1.0\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        try old.handler(ContinueHandler.self).bodyWanted()
        #expect(try old.written() == "")

        let eager = try Wire.floored(Self.floor)
        try eager.send(head(size: 300, length: 10, more: "Expect: 100-continue\r\n") + "01234")
        try eager.handler(ContinueHandler.self).bodyWanted()
        #expect(try eager.written() == "")
    }

    @Test("Pipelined: the 100 wanted while an answer before it is unfinished goes out after that answer")
    func pipelined() throws {
        let wire = try Wire.floored(Self.floor)
        try wire.send(
            "GET /a HTTP/1.1\r\nHost: a\r\n\r\n" + head(size: 300, length: 10, more: "Expect: 100-continue\r\n"))
        try wire.handler(ContinueHandler.self).bodyWanted()
        #expect(try wire.written() == "")
        try wire.answer(.ok, body: "first")
        let text = try wire.written()
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n") && text.hasSuffix("first" + Self.continued), "\(text)")
        #expect(wire.isOpen)
    }

    @Test(
        "Which heads expect 100 Continue",
        arguments: [
            ("100-continue", HTTPVersion.http1_1, true), ("100-Continue", .http1_1, true),
            (" gzip ,\t100-continue ", .http1_1, true), ("100-continues", .http1_1, false),
            ("100-continue", .http1_0, false), ("100-continue", HTTPVersion(major: 2, minor: 0), true),
        ])
    func expectations(_ value: String, _ version: HTTPVersion, _ expected: Bool) {
        let head = HTTPRequestHead(version: version, method: .POST, uri: "/", headers: ["Expect": value])
        #expect(ExpectContinue.expectsContinue(head) == expected)
    }
}
