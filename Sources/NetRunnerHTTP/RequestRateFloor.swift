import HTTPTypes
package import HummingbirdCore
package import Logging
package import NIOCore
import NIOHTTPTypes

/// The least pace at which a client must send a request (Apache's mod_reqtimeout, `MinRate=500`),
/// and the longest a request may take whatever its pace.
///
/// From a request's first byte until its body has been read whole, the request has `allowance`
/// (the server's idle timeout), plus one second for every `bytesPerSecond` bytes it has sent
/// (mod_reqtimeout's `header=…,MinRate=500 body=…,MinRate=500`), and never more than `limit`
/// (`--request-timeout`; mod_reqtimeout's `body=20-40`, a maximum). When that runs out, the
/// request is answered `408 Request Timeout` with `Connection: close` if no answer has started
/// (else nothing more) and its connection closed.
///
/// Hummingbird's idle timeout starts again at every piece of a body, so a client sending one
/// byte every few seconds would hold its connection for ever, and a few hundred such clients
/// every connection the server allows. The rate alone is not enough either: a body sent just
/// above it (600 bytes/s) holds a connection as long as its size allows (18 hours for 32 MiB),
/// hence `limit`. Only the time the server is waiting for the client counts: while the server
/// itself holds the body back (a handler not reading yet), the clock stops. Connections that
/// have become something else (a WebSocket) are left alone (``stop(on:)``).
///
/// The floor also keeps the idle timeout (Hummingbird's is off): a connection with no request
/// being read or answered is closed after `allowance`.
///
/// Both servers use it: ``http1(floor:perAddress:)`` for a plain HTTP/1.1 server,
/// ``RateFlooredChannel`` and ``httpHandlers()`` to add it to another child channel. The channel
/// also answers `Expect: 100-continue` (``ExpectContinue``, whose responder the server's
/// responder goes through).
package struct RequestRateFloor: Sendable {
    /// What a request may take before the bytes it sends earn more: the server's idle timeout.
    package var allowance: Duration
    /// The bytes that earn one more second (mod_reqtimeout's `MinRate`).
    package var bytesPerSecond: Int
    /// The most a request may take, whatever its rate (`--request-timeout`); `nil`: no bound
    /// but the rate's.
    package var limit: Duration?

    /// A floor.
    ///
    /// - Parameters:
    ///   - allowance: What a request may take before its bytes earn more: the idle timeout.
    ///   - limit: The most a request may take, whatever its rate; `nil`: no bound but the rate's.
    ///   - bytesPerSecond: The bytes that earn one more second; at least 1.
    package init(allowance: Duration, limit: Duration? = nil, bytesPerSecond: Int = 500) {
        self.allowance = allowance
        self.limit = limit
        self.bytesPerSecond = max(1, bytesPerSecond)
    }

    /// The handlers that tell the floor where each request ends and each answer starts, for
    /// `HTTP1Channel.Configuration.additionalChannelHandlers` (they sit after the HTTP codec).
    ///
    /// They also close a connection once an answer that says `Connection: close` has been
    /// written, without handing on what is left of the request (Hummingbird would read it to the
    /// end first): a lingering close drops what still comes for at most two seconds.
    package static func httpHandlers() -> [any RemovableChannelHandler] {
        [RequestRateWatcher()]
    }

    /// Stops the floor on a connection that is no more HTTP (a WebSocket after its upgrade).
    ///
    /// - Parameter channel: The connection; called on its event loop.
    package static func stop(on channel: any Channel) {
        guard channel.eventLoop.inEventLoop else { return }
        (try? channel.pipeline.syncOperations.handler(type: RequestRateGuard.self))?.stop()
        ExpectContinue.remove(from: channel)
    }

    /// A plain HTTP/1.1 server (Hummingbird's `.http1`) with a floor (whose allowance is also
    /// the idle timeout), a cap on the connections of one client address, and their budget.
    ///
    /// - Parameters:
    ///   - floor: The floor; its allowance is how long a connection may stay idle.
    ///   - perAddress: The cap on one address's connections, shared by all of them.
    ///   - budget: The budget of all connections (`--max-connections`), shared by all of them.
    /// - Returns: The server builder, for `Application(router:server:)`.
    package static func http1(
        floor: RequestRateFloor, perAddress: AddressConnectionCap, budget: ConnectionBudget
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            guarded(
                HTTP1Channel(
                    responder: ExpectContinue.responder(responder),
                    configuration: .init(additionalChannelHandlers: httpHandlers(), idleTimeout: nil)),
                floor: floor, perAddress: perAddress, budget: budget)
        }
    }

    /// A child channel behind a connection's three guards, outermost first: the cap on its
    /// address's connections, the budget of all connections, and the floor.
    ///
    /// - Parameters:
    ///   - inner: The channel set up behind them.
    ///   - floor: The floor; its allowance is how long a connection may stay idle.
    ///   - perAddress: The cap on one address's connections, shared by all of them.
    ///   - budget: The budget of all connections (`--max-connections`), shared by all of them.
    /// - Returns: The guarded channel.
    package static func guarded<Inner: ServerChildChannel>(
        _ inner: Inner, floor: RequestRateFloor, perAddress: AddressConnectionCap, budget: ConnectionBudget
    ) -> AddressCappedChannel<BudgetedChannel<RateFlooredChannel<Inner>>> {
        LayeredChannel(
            inner: LayeredChannel(inner: LayeredChannel(inner: inner, layer: floor), layer: budget), layer: perAddress)
    }

    /// What a request that has sent `received` bytes may take: the allowance plus a second per
    /// `bytesPerSecond` bytes, never more than `limit`.
    func limit(after received: Int) -> TimeAmount {
        let earned = allowance(after: received)
        guard let limit else { return earned }
        return min(earned, TimeAmount(clamping: limit))
    }

    /// Whether a request that has sent `received` bytes is cut by `limit` rather than by the rate.
    func isPastLimit(after received: Int) -> Bool {
        guard let limit else { return false }
        return TimeAmount(clamping: limit) < allowance(after: received)
    }

    /// What a request that has sent `received` bytes may take at this rate: the allowance plus a
    /// second per `bytesPerSecond` bytes, at most about 292 years.
    func allowance(after received: Int) -> TimeAmount {
        let rate = Int64(bytesPerSecond)
        let bytes = Int64(clamping: received)
        let earned = (bytes / rate).multipliedReportingOverflow(by: 1_000_000_000)
        let rest = (bytes % rate) * 1_000_000_000 / rate
        let base = TimeAmount(clamping: allowance).nanoseconds
        guard !earned.overflow else { return .nanoseconds(.max) }
        let (sum, overflow) = base.addingReportingOverflow(earned.partialValue + rest)
        return .nanoseconds(overflow ? .max : sum)
    }
}

/// A child channel (HTTP/1.1, maybe upgraded) with ``RequestRateFloor``'s byte counter in front,
/// and ``ExpectContinue``'s handler after its HTTP/1 decoder.
///
/// The inner channel's HTTP handlers must include ``RequestRateFloor/httpHandlers()``, which
/// tell the counter where requests end, and its responder go through
/// ``ExpectContinue/responder(_:)``.
package typealias RateFlooredChannel<Inner: ServerChildChannel> = LayeredChannel<Inner, RequestRateFloor>

extension RequestRateFloor: ChannelLayer {
    /// Puts the request counter at the front of the pipeline, and ``ExpectContinue``'s
    /// handler after the inner channel's HTTP/1 decoder.
    package func setup<Inner: ServerChildChannel>(
        channel: any Channel, logger: Logger, inner: Inner
    ) -> EventLoopFuture<Inner.Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(RequestRateGuard(floor: self), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try ExpectContinue.install(on: channel)
            return value
        }
    }
}

/// The front of a connection's pipeline (bytes in, bytes out): counts each request's bytes and
/// the time the server waited for them, and ends the request that falls below the floor.
///
/// A request starts at its first byte (or at its head, told by ``RequestRateWatcher``, when it
/// came in the same read as the end of the one before) and ends when the watcher has seen its
/// end. The server is waiting for the client from each `read` it asks for until bytes come;
/// between them (the bytes being handled, or held back by a handler that reads no more yet)
/// the clock stops.
final class RequestRateGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let floor: RequestRateFloor
    /// A request is being read.
    var reading = false
    /// Its bytes so far.
    var received = 0
    /// The time the server spent waiting for them, up to `waitingSince`.
    var waited = TimeAmount.zero
    /// When the server last asked for bytes that have not come yet; `nil` while it is busy.
    var waitingSince: NIODeadline?
    /// The request waits for the server's `100 Continue` (``hold()``): the clock stops.
    private var held = false
    /// The server asked for bytes while the clock was held.
    private var askedWhileHeld = false
    /// The request heads read that no answer has started for yet.
    var unanswered = 0
    /// The head of the request being read has been read.
    var headRead = false
    /// An answer is being written (its head was, its end not yet).
    var answering = false
    /// The connection is closed, or no longer HTTP.
    var stopped = false
    /// The connection is closing (a 408 or an answer saying `Connection: close` was sent, the
    /// output closed): what still comes in is dropped until the close.
    var lingering = false
    /// The idle timeout's timer: armed while no request is read or answered.
    private var idleTimer: Scheduled<Void>?
    /// This handler's context (for the idle timer, armed from the watcher's calls).
    var context: ChannelHandlerContext?
    private var timer: Scheduled<Void>?
    /// This connection in the server's ``ConnectionBudget``, told of every change (``publish()``).
    var budgetEntry: BudgetEntry?

    init(floor: RequestRateFloor) {
        self.floor = floor
    }

    /// The clock every wait is measured by: the event loop's (`NIODeadline.now()` on a real one).
    var now: NIODeadline { context?.eventLoop.now ?? .now() }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { armIdle() }
    }

    func channelActive(context: ChannelHandlerContext) {
        armIdle()
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if lingering { return }
        if !stopped {
            let count = unwrapInboundIn(data).readableBytes
            if reading {
                if let since = waitingSince { waited = waited + (now - since) }
            } else {
                start()
            }
            waitingSince = nil
            askedWhileHeld = false
            received = received.addingReportingOverflow(count).overflow ? .max : received + count
            publish()
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        if held {
            askedWhileHeld = true
        } else if reading, !stopped, waitingSince == nil {
            waitingSince = now
            if timer == nil { schedule(context) }
            publish()
        }
        context.read()
    }

    /// Stops counting for good: the connection is closed or no longer HTTP.
    func stop() {
        stopped = true
        timer?.cancel()
        timer = nil
        idleTimer?.cancel()
        idleTimer = nil
        publish()
    }

    /// The idle timeout, which this handler keeps instead of Hummingbird: a connection with no
    /// request being read or answered is closed after `allowance` (Hummingbird's own timer also
    /// cut a request whose body the server itself held back, a busy server's fault, not the
    /// client's, and with no answer).
    private func armIdle() {
        publish()
        idleTimer?.cancel()
        idleTimer = nil
        guard !stopped, !reading, !answering, unanswered == 0, let context else { return }
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(clamping: floor.allowance)) {
            [self] in
            idleTimer = nil
            guard !stopped, !reading, !answering, unanswered == 0 else { return }
            context.close(promise: nil)
        }
    }

    /// Told by the watcher that a request head was read: a request starts if none was going
    /// (its first bytes came with the end of the one before).
    func requestHeadRead() {
        if !reading, !stopped { start() }
        headRead = true
        unanswered += 1
        publish()
    }

    /// Told by ``ContinueHandler`` that the request waits for `100 Continue`: the time until
    /// ``release()`` is the server's, not the client's.
    func hold() {
        guard !held else { return }
        if let since = waitingSince { waited = waited + (now - since) }
        waitingSince = nil
        held = true
        publish()
    }

    /// Told by ``ContinueHandler`` that the request waits no more: the clock runs again if the
    /// server is asking for bytes.
    func release() {
        guard held else { return }
        held = false
        guard askedWhileHeld, reading, !stopped, let context else { return }
        askedWhileHeld = false
        waitingSince = now
        if timer == nil { schedule(context) }
        publish()
    }

    /// Told by the watcher that a request was read whole: its clock stops.
    func requestRead() {
        reading = false
        waitingSince = nil
        timer?.cancel()
        timer = nil
        armIdle()
    }

    /// Told by the watcher that an answer's head was written.
    func answerStarted() {
        unanswered = max(0, unanswered - 1)
        answering = true
        publish()
    }

    /// Told by the watcher that an answer's end was written.
    func answerEnded() {
        answering = false
        armIdle()
    }

    private func start() {
        idleTimer?.cancel()
        idleTimer = nil
        reading = true
        received = 0
        waited = .zero
        waitingSince = nil
        headRead = false
    }

    /// The time the server has waited for this request so far.
    private func spent() -> TimeAmount {
        waited + (waitingSince.map { now - $0 } ?? .zero)
    }

    private func schedule(_ context: ChannelHandlerContext) {
        let left = floor.limit(after: received) - spent()
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: max(left, .zero)) { [self] in
            timer = nil
            guard reading, !stopped else { return }
            if spent() >= floor.limit(after: received) {
                expire(context)
            } else if waitingSince != nil {
                schedule(context)
            }
            // Else the server holds the request back: the next `read` starts the clock again.
        }
    }

    /// Ends a request below the floor or past the limit: 408 if it has no answer yet (and none to
    /// a request before it is being written), and the connection closed.
    private func expire(_ context: ChannelHandlerContext) {
        let answers = !answering && !(headRead && unanswered == 0)
        let why = floor.isPastLimit(after: received) ? "took too long" : "came too slowly"
        stop()
        if answers {
            let body = #"{"error":true,"error_description":"Request Timeout: the request \#(why)."}"#
            let head =
                "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n"
            lingering = true
            let written = context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: head + body)))
            written.assumeIsolated().whenComplete { [self] _ in linger(context) }
            return
        }
        context.close(promise: nil)
    }

    /// Told by the watcher that an answer saying `Connection: close` was written: the
    /// connection is closed as ``linger(_:)`` closes it, whatever of the request is left unread.
    func answeredWithClose() {
        guard let context else { return }
        stop()
        lingering = true
        linger(context)
    }

    /// Writes the last part of an answer that closes its connection: once it is written (or has
    /// failed), `counter` closes the connection (``answeredWithClose()``), or it is closed at once
    /// without a counter.
    ///
    /// - Parameters:
    ///   - data: The answer's last part.
    ///   - promise: The writer's promise, completed with the write.
    ///   - context: The writing handler's context.
    ///   - counter: The connection's guard, if it has one.
    static func writeClosing(
        _ data: NIOAny, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext, counter: RequestRateGuard?
    ) {
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { _ in
            if let counter { counter.answeredWithClose() } else { context.close(promise: nil) }
        }
        if let promise { written.futureResult.cascade(to: promise) }
        context.writeAndFlush(data, promise: written)
    }

    /// Closes a connection as nginx's lingering close does.
    ///
    /// The output is closed (FIN) after the answer, then what the client still sends is read and
    /// dropped for at most `lingerTime` before the close. Closing at once with the client's bytes
    /// unread sends RST, and a client still sending its body (a 401 to an upload without a key,
    /// a 408) would lose the answer with its connection.
    private func linger(_ context: ChannelHandlerContext) {
        let closed = context.eventLoop.makePromise(of: Void.self)
        closed.futureResult.assumeIsolated().whenFailure { _ in context.close(promise: nil) }
        context.close(mode: .output, promise: closed)
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerTime) { context.close(promise: nil) }
        context.read()
    }

    /// How long a closing connection still takes in (and drops) what the client sends.
    static let lingerTime = TimeAmount.seconds(2)

    func channelReadComplete(context: ChannelHandlerContext) {
        // Nothing behind this handler asks for the bytes being dropped: ask for them here.
        if lingering {
            context.read()
            return
        }
        context.fireChannelReadComplete()
    }
}

/// After the HTTP codec: tells ``RequestRateGuard`` where requests end and answers start, and
/// closes the connection after an answer that says `Connection: close`.
final class RequestRateWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var counter: RequestRateGuard?
    /// The answer being written says `Connection: close`.
    private var closeAfterAnswer = false

    func handlerAdded(context: ChannelHandlerContext) {
        counter = try? context.pipeline.syncOperations.handler(type: RequestRateGuard.self)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: counter?.requestHeadRead()
        case .body: break
        case .end: counter?.requestRead()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            // 1xx (100 Continue) are not the answer.
            guard response.status.kind != .informational else { break }
            counter?.answerStarted()
            closeAfterAnswer = Self.saysClose(response.headerFields[values: .connection])
        case .body:
            break
        case .end:
            counter?.answerEnded()
            guard closeAfterAnswer else { break }
            // Written (or failed): close, whatever of the request is left unread (lingering).
            RequestRateGuard.writeClosing(data, promise: promise, context: context, counter: counter)
            return
        }
        context.write(data, promise: promise)
    }

    /// Whether `Connection` header values hold the `close` option.
    static func saysClose(_ values: [String]) -> Bool {
        values.contains { value in
            value.split(separator: ",").contains { $0.filter { $0 != " " && $0 != "\t" }.lowercased() == "close" }
        }
    }
}
