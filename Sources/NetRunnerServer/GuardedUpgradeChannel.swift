import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// `serve`'s connections (HTTP/1.1 that may become the live WebSocket), watched until their first
/// request has been read.
///
/// Hummingbird's idle timeout, the 400 it answers to a malformed request and its quiescing on
/// SIGTERM all live in handlers that the WebSocket upgrade adds only once the first request head
/// has been read whole. Until then a connection would sit forever: half-sent headers, a
/// malformed first request (its parse error reaches no one), a SIGTERM waiting on it. This
/// channel adds ``FirstRequestGuard`` in front of the pipeline for that first stretch.
struct GuardedUpgradeChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let inner: HTTP1WebSocketUpgradeChannel
    /// How long the first request head may take to arrive whole.
    let firstRequestTimeout: Duration

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let timeout = firstRequestTimeout
        do {
            try channel.pipeline.syncOperations.addHandler(FirstRequestGuard(timeout: timeout), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            // Last for now: the upgrade puts the HTTP or WebSocket handlers after it.
            try value.channel.pipeline.syncOperations.addHandler(FirstRequestErrors())
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
