import HummingbirdCore
import NIOCore
import NIOWebSocket

/// The front of a `serve` connection's pipeline (bytes in, bytes out) until its first request
/// head has been read.
///
/// After `timeout` without it, answers 408 and closes; on SIGTERM's quiescing, closes; told of a
/// parse error by ``FirstRequestErrors``, answers 400 and closes. Once the upgrade has set the
/// connection up (Hummingbird's connection handler, or a WebSocket's
/// decoder, is in the pipeline), it only passes everything on.
final class FirstRequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let timeout: Duration
    private var deadline: Scheduled<Void>?
    private var done = false

    init(timeout: Duration) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        done = true
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !isSetUp(context) {
            // Shutting down: a request that has not even been read has nothing in flight.
            refuse(context, status: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard deadline == nil, !done else { return }
        let seconds = timeout.components.seconds
        let nanoseconds = timeout.components.attoseconds / 1_000_000_000
        deadline = context.eventLoop.assumeIsolated().scheduleTask(
            in: .seconds(seconds) + .nanoseconds(nanoseconds)
        ) { [self] in
            deadline = nil
            if !isSetUp(context) { refuse(context, status: "408 Request Timeout") }
        }
    }

    /// Whether the first request head was read and the connection set up for it.
    private func isSetUp(_ context: ChannelHandlerContext) -> Bool {
        let pipeline = context.pipeline.syncOperations
        return (try? pipeline.handler(type: HTTPConnectionStateHandler.self)) != nil
            || (try? pipeline.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self)) != nil
    }

    /// Answers a first request that cannot be served (`400 Bad Request`, `408 Request Timeout`;
    /// `nil`: nothing) and closes the connection.
    func refuse(_ context: ChannelHandlerContext, status: String?) {
        guard !done else { return }
        done = true
        deadline?.cancel()
        if let status {
            let body = #"{"error":true,"error_description":"\#(status.dropFirst(4)): the request was not read."}"#
            let head =
                "HTTP/1.1 \(status)\r\nConnection: close\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: head + body)), promise: nil)
        }
        // Input closed first: the upgrade handler then gives up quietly (a plain close would log an
        // error for every slow client).
        context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        context.close(promise: nil)
    }

    /// Told by ``FirstRequestErrors`` that the first request could not be parsed.
    func parseFailed(_ context: ChannelHandlerContext) {
        refuse(context, status: "400 Bad Request")
    }
}

/// The back of a `serve` connection's pipeline while its first request is read.
///
/// A parse error of that request (which no handler answers before the upgrade has set the
/// connection up) goes to ``FirstRequestGuard`` for a 400. Later errors go on to Hummingbird, which answers them.
final class FirstRequestErrors: ChannelInboundHandler, RemovableChannelHandler {
    /// Whatever the pipeline carries (HTTP parts, then maybe WebSocket frames): passed on untouched.
    typealias InboundIn = NIOAny

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let pipeline = context.pipeline.syncOperations
        let setUp =
            (try? pipeline.handler(type: HTTPConnectionStateHandler.self)) != nil
            || (try? pipeline.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self)) != nil
        if !setUp, let front = try? pipeline.context(handlerType: FirstRequestGuard.self),
            let handler = front.handler as? FirstRequestGuard
        {
            handler.parseFailed(front)
            return
        }
        context.fireErrorCaught(error)
    }
}
