import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Synchronization
import Testing

@testable import NetRunnerHTTP

/// The inner channel the tests set up behind the servers' wrappers: the HTTP/1.1 codec as
/// Hummingbird's `HTTP1Channel` sets it up, with the floor's watcher (`http`), or nothing (the
/// wrappers that count bytes and connections only); nothing handles its requests.
struct InnerChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    /// Whether the HTTP codec and ``RequestRateFloor/httpHandlers()`` are set up.
    var http = true
    /// How many connections were set up (refused ones too: the accept loop must go on).
    let setups = Count()

    final class Count: Sendable {
        let value = Atomic<Int>(0)
    }

    /// How many connections were set up so far.
    var setupCount: Int { setups.value.load(ordering: .relaxed) }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        setups.value.add(1, ordering: .relaxed)
        return channel.eventLoop.makeCompletedFuture {
            if http {
                let operations = channel.pipeline.syncOperations
                try operations.configureHTTPServerPipeline(
                    withPipeliningAssistance: false, withErrorHandling: false, withOutboundHeaderValidation: false)
                try operations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                try operations.addHandlers(RequestRateFloor.httpHandlers())
            }
            return Value(channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {}
}

/// One client connection on an `EmbeddedChannel`, the server's handlers set up on it by a
/// wrapper's own `setup`: the test sends bytes, asks for more as the server's reads do, plays
/// the server's answers, and moves the loop's clock (which the handlers measure time by).
struct Wire {
    let channel: EmbeddedChannel
    var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

    /// A connection from `address`, accepted (active) and set up by `wrapper`.
    ///
    /// - Parameters:
    ///   - wrapper: The server's child channel (a floor, a cap, a budget around ``InnerChannel``).
    ///   - loop: The loop (and clock) the connection runs on, shared by a test's connections.
    ///   - address: The client's address; `nil`: a Unix socket's (no IP address).
    ///   - logger: Where the wrappers log.
    /// - Throws: What the connect or the set-up throws.
    init(
        _ wrapper: some ServerChildChannel, loop: EmbeddedEventLoop, from address: String? = "192.0.2.1",
        logger: Logger = Logger(label: "wire") { _ in SwiftLogNoOpLogHandler() }
    ) throws {
        channel = EmbeddedChannel(loop: loop)
        let remote = try address.map { try SocketAddress(ipAddress: $0, port: 40_000) }
        try channel.connect(to: remote ?? SocketAddress(unixDomainSocketPath: "/tmp/wire.sock")).wait()
        _ = try wrapper.setup(channel: channel, logger: logger).wait()
        loop.run()
    }

    /// A request floor's connection: the floor in front of the HTTP codec, as both servers have it.
    static func floored(_ floor: RequestRateFloor, loop: EmbeddedEventLoop = EmbeddedEventLoop()) throws -> Wire {
        try Wire(RateFlooredChannel(inner: InnerChannel(), layer: floor), loop: loop)
    }

    var isOpen: Bool { channel.isActive }

    /// The client sends `text`.
    func send(_ text: String) throws {
        try channel.writeInbound(ByteBuffer(string: text))
    }

    /// The server asks for more bytes (a read, as the server's handlers ask for them).
    func ask() {
        channel.read()
    }

    /// Moves the clock on by `amount`, running what falls due.
    func advance(_ amount: TimeAmount) {
        loop.advanceTime(by: amount)
        loop.run()
    }

    /// What the server wrote since the last call, as text.
    func written() throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    /// The request parts the codec handed on since the last call.
    func parts() throws -> [HTTPRequestPart] {
        var parts: [HTTPRequestPart] = []
        while let part = try channel.readInbound(as: HTTPRequestPart.self) { parts.append(part) }
        return parts
    }

    /// The server answers `status` with `fields`, and `body` unless `end` is false.
    func answer(_ status: HTTPResponse.Status, _ fields: HTTPFields = [:], body: String = "", end: Bool = true) throws {
        var fields = fields
        fields[.contentLength] = "\(body.utf8.count)"
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: status, headerFields: fields)))
        if !body.isEmpty { try channel.writeOutbound(HTTPResponsePart.body(ByteBuffer(string: body))) }
        if end { try channel.writeOutbound(HTTPResponsePart.end(nil)) }
        loop.run()
    }

    /// The handler of `type` in the connection's pipeline.
    func handler<Handler: ChannelHandler>(_ type: Handler.Type) throws -> Handler {
        try channel.pipeline.syncOperations.handler(type: type)
    }
}

/// The lines logged at notice and above, with their metadata.
final class LogLines: Sendable {
    private let lines = Mutex<[(message: String, metadata: Logger.Metadata)]>([])

    var messages: [String] { lines.withLock { $0.map(\.message) } }

    /// The value of `key` in each line's metadata.
    func values(_ key: String) -> [String] {
        lines.withLock { $0.compactMap { $0.metadata[key].map { "\($0)" } } }
    }

    /// A logger that writes here.
    var logger: Logger {
        Logger(label: "test") { _ in Handler(lines: self) }
    }

    private struct Handler: LogHandler {
        let lines: LogLines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .notice

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            lines.lines.withLock { $0.append(("\(event.message)", merged)) }
        }
    }
}

/// A request head of `size` bytes exactly (`Content-Length: length` and padding in a header).
func head(_ method: String = "POST", size: Int, length: Int, more: String = "") -> String {
    let start = "\(method) /upload HTTP/1.1\r\nHost: a\r\nContent-Length: \(length)\r\n\(more)X-Pad: "
    let padding = size - start.utf8.count - 4
    precondition(padding >= 0, "a head of \(size) bytes cannot hold \(start)")
    return start + String(repeating: "p", count: padding) + "\r\n\r\n"
}
