import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// What takes a response's head and body as they arrive, on the HTTP client's event loop.
///
/// Both methods are called one after another, never at once; a thrown error ends the request
/// and is what ``EventLoopBody/read(_:with:deadline:into:)`` throws.
protocol ResponseConsumer: AnyObject, Sendable {
    /// Takes the response's head, before any of its body.
    ///
    /// - Parameter head: The status and headers.
    /// - Throws: To end the request unread.
    func receive(head: HTTPResponseHead) throws

    /// Takes the next piece of the body.
    ///
    /// - Parameter body: The piece.
    /// - Returns: How long to wait before the next piece is read (`.zero`: at once); a rate
    ///   limit waits so.
    /// - Throws: To end the request there.
    func receive(body: ByteBuffer) throws -> Duration
}

/// Reads responses on the HTTP client's event loop instead of in a Swift task.
///
/// A body read as an `AsyncSequence` is read only when its task runs, and a task waits its turn
/// on the cooperative threads. While it waits the connection is not read, and the client's
/// read timeout (30 s here) counts a busy process's delay as the server's silence: an import
/// failed so in a test run whose threads were all held by other work, its server idle, as a
/// download would in an app whose tasks run models. Here each piece goes to the consumer as it
/// arrives, and the read timeout counts only the server.
enum EventLoopBody {
    /// Sends `request` and hands its response to `consumer` until the end.
    ///
    /// Cancelling the calling task cancels the request.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - client: The client that sends it.
    ///   - deadline: When the whole request is given up.
    ///   - consumer: What takes the head and the body.
    /// - Throws: What the consumer threw, or the client's error.
    static func read(
        _ request: HTTPClient.Request, with client: HTTPClient, deadline: NIODeadline,
        into consumer: some ResponseConsumer
    ) async throws {
        let task = client.execute(request: request, delegate: Delegate(consumer: consumer), deadline: deadline)
        try await withTaskCancellationHandler {
            try await task.futureResult.get()
        } onCancel: {
            task.cancel()
        }
    }

    private final class Delegate<Consumer: ResponseConsumer>: HTTPClientResponseDelegate, Sendable {
        typealias Response = Void
        let consumer: Consumer

        init(consumer: Consumer) { self.consumer = consumer }

        func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            do {
                try consumer.receive(head: head)
                return task.eventLoop.makeSucceededVoidFuture()
            } catch {
                return task.eventLoop.makeFailedFuture(error)
            }
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            let pause: Duration
            do {
                pause = try consumer.receive(body: buffer)
            } catch {
                return task.eventLoop.makeFailedFuture(error)
            }
            guard pause > .zero else { return task.eventLoop.makeSucceededVoidFuture() }
            let (seconds, attoseconds) = pause.components
            let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            let amount: TimeAmount =
                nanoseconds.overflow ? .hours(1) : .nanoseconds(nanoseconds.partialValue + attoseconds / 1_000_000_000)
            return task.eventLoop.scheduleTask(in: amount) {}.futureResult
        }

        func didFinishRequest(task: HTTPClient.Task<Void>) throws {}
    }
}
