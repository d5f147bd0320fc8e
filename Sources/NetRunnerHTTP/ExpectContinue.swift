import HTTPTypes
package import HummingbirdCore
package import NIOCore
import NIOHTTP1

/// `Expect: 100-continue` (RFC 9110 §10.1.1), as nginx and uvicorn answer it: `100 Continue`
/// when the request's handler first reads its body, a final status instead when it answers first.
///
/// curl sends the expectation with every body over 1 MB and then waits a second for the `100`
/// before sending the body anyway; a server that never answers it costs every phone photo that
/// second. The checks a request's head is put to (its key, its route, its `Content-Length`
/// against the limit) are made by middleware and handlers before they read the body, so the
/// `100` goes out when the body is first read (``responder(_:)``), which is after them: a
/// refused request is answered 401, 404 or 413 without its body being sent. That answer says
/// `Connection: close`, and the connection is closed after it as ``RequestRateFloor`` closes one
/// (what the client still sends is read and dropped for a moment): the body it did not send can
/// neither be read nor taken for the next request.
///
/// Never for HTTP/1.0 (which knows no `100`), only once per request, never after its answer has
/// started, and not once the client has started sending the body without waiting. While a
/// request waits for its `100` the request rate floor's clock stops: the client is waiting for
/// the server, not the other way round.
package enum ExpectContinue {
    /// The responder a server hands Hummingbird's channel, around its own: a request that
    /// expects `100 Continue` gets a body that asks for it when first read.
    ///
    /// - Parameter inner: The server's responder.
    /// - Returns: The responder to give `HTTP1Channel` (or the WebSocket upgrade channel).
    package static func responder(
        _ inner: @escaping @Sendable (Request, consuming ResponseWriter, any NIOCore.Channel) async throws -> Void
    ) -> @Sendable (Request, consuming ResponseWriter, any NIOCore.Channel) async throws -> Void {
        // (HTTPChannelHandler.Responder, spelled out: through the alias alone the compiler takes
        // NIOCore's Channel for unused in package declarations and warns of the package import,
        // while an internal import cannot declare it.)
        { request, writer, channel in
            var request = request
            if request.headers[.expect] != nil {
                request.body = RequestBody(asyncSequence: ContinuedBody(base: request.body, channel: channel))
            }
            try await inner(request, writer, channel)
        }
    }

    /// Adds the handler that answers the expectation right after the HTTP/1 decoder (the last
    /// place a request's HTTP version is known); nothing when the pipeline has no decoder.
    ///
    /// - Parameter channel: The connection, its HTTP handlers set up; called on its event loop.
    /// - Throws: What the pipeline throws adding it.
    static func install(on channel: any Channel) throws {
        let pipeline = channel.pipeline.syncOperations
        guard let decoder = try? pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) else { return }
        try pipeline.addHandler(ContinueHandler(), position: .after(decoder))
    }

    /// Removes the handler from a connection that is no more HTTP (a WebSocket after its
    /// upgrade), whose parts it could not read.
    ///
    /// - Parameter channel: The connection; called on its event loop.
    static func remove(from channel: any Channel) {
        let pipeline = channel.pipeline.syncOperations
        guard let handler = try? pipeline.handler(type: ContinueHandler.self) else { return }
        pipeline.removeHandler(handler, promise: nil)
    }

    /// Whether a request head expects `100 Continue`: HTTP/1.1 or later, and `100-continue`
    /// among its `Expect` values (in any case).
    static func expectsContinue(_ head: HTTPRequestHead) -> Bool {
        guard head.version.major > 1 || (head.version.major == 1 && head.version.minor >= 1) else { return false }
        return head.headers["expect"].contains { value in
            value.split(separator: ",").contains { $0.trimmingSpaces().lowercased() == "100-continue" }
        }
    }
}

/// A request body that, read for the first time, tells the connection's ``ContinueHandler``
/// that the handler wants it.
struct ContinuedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let base: RequestBody
    let channel: any Channel

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        let channel: any Channel
        var asked = false

        mutating func next() async throws -> ByteBuffer? {
            if !asked {
                asked = true
                let channel = channel
                channel.eventLoop.execute {
                    (try? channel.pipeline.syncOperations.handler(type: ContinueHandler.self))?.bodyWanted()
                }
            }
            return try await base.next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), channel: channel)
    }
}

/// After the HTTP/1 decoder: writes `100 Continue` to the request waiting for it when its body is
/// wanted, or makes the final answer that comes first close the connection.
///
/// Requests may be pipelined: the one waiting is answered after the answers of those before it
/// (`ahead`), and a `100` wanted while one of them is still being written waits for its end.
final class ContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The request waiting for its `100`: at most one (its client sends nothing more until it
    /// has the `100` or an answer).
    private struct Waiting {
        /// The answers to requests before it that have not ended yet.
        var ahead: Int
        /// Its handler has asked for the body while an answer before it was still being written.
        var wanted = false
    }

    private var waiting: Waiting?
    /// Requests whose head was read and whose answer has not ended.
    private var open = 0
    /// The answer being written was made to close the connection (its request's body unread).
    private var closing = false
    private var context: ChannelHandlerContext?
    /// The request rate floor's counter, whose clock stops while a request waits for its `100`.
    private var counter: RequestRateGuard?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        counter = try? context.pipeline.syncOperations.handler(type: RequestRateGuard.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        settle()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if ExpectContinue.expectsContinue(head) {
                waiting = Waiting(ahead: open)
                counter?.hold()
            }
            open = open < Int.max ? open + 1 : open
        case .body, .end:
            // The body comes without the `100` (the client stopped waiting), or there is none.
            settle()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200:
            guard let waiting, waiting.ahead == 0 else { break }
            // The final answer to the request waiting for its `100`, whose body was not wanted.
            settle()
            if !RequestRateWatcher.saysClose(head.headers["connection"]) {
                head.headers.replaceOrAdd(name: "connection", value: "close")
                closing = true
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
            return
        case .head(let head):
            // A `1xx` written by the server itself: a `100` it sent is the one.
            if waiting?.ahead == 0, head.status == .continue { settle() }
        case .body:
            break
        case .end:
            open = max(0, open - 1)
            if closing {
                closing = false
                RequestRateGuard.writeClosing(data, promise: promise, context: context, counter: counter)
                return
            }
            guard var waiting, waiting.ahead > 0 else { break }
            waiting.ahead -= 1
            self.waiting = waiting
            if waiting.ahead == 0, waiting.wanted {
                context.write(data, promise: promise)
                sendContinue()
                return
            }
        }
        context.write(data, promise: promise)
    }

    /// Told by ``ContinuedBody`` that the handler reads the body: `100 Continue` now, or once the
    /// answers before it have ended; nothing if no request is waiting (its answer has started,
    /// its body came without it, or it expected nothing).
    func bodyWanted() {
        guard var waiting else { return }
        guard waiting.ahead == 0 else {
            waiting.wanted = true
            self.waiting = waiting
            return
        }
        sendContinue()
    }

    private func sendContinue() {
        guard let context else { return }
        settle()
        let head = HTTPResponseHead(version: .http1_1, status: .continue)
        context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
    }

    /// No request waits any more: the floor's clock runs again.
    private func settle() {
        guard waiting != nil else { return }
        waiting = nil
        counter?.release()
    }
}

extension Substring {
    /// Without the spaces and tabs around it.
    fileprivate func trimmingSpaces() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
