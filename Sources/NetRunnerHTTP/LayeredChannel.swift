package import HummingbirdCore
package import Logging
package import NIOCore

/// What a ``LayeredChannel`` does as a connection is set up, around its inner channel's
/// set-up: a cap per address (``AddressConnectionCap``), a budget (``ConnectionBudget``), a
/// floor on the request rate (``RequestRateFloor``).
package protocol ChannelLayer: Sendable {
    /// Sets up a connection: the layer's part, and the inner channel's.
    ///
    /// - Parameters:
    ///   - channel: The connection.
    ///   - logger: The server's logger.
    ///   - inner: The channel set up behind the layer.
    /// - Returns: The inner channel's value.
    func setup<Inner: ServerChildChannel>(
        channel: any Channel, logger: Logger, inner: Inner
    ) -> EventLoopFuture<Inner.Value>
}

/// A child channel behind a layer: the layer sets each connection up around the inner
/// channel's set-up, and the inner channel handles it.
package struct LayeredChannel<Inner: ServerChildChannel, Layer: ChannelLayer>: ServerChildChannel {
    package typealias Value = Inner.Value

    /// The channel set up behind the layer.
    package let inner: Inner
    /// The layer, shared by every connection of the server.
    package let layer: Layer

    /// A channel behind a layer.
    ///
    /// - Parameters:
    ///   - inner: The channel set up behind the layer.
    ///   - layer: The layer, shared by every connection of the server.
    package init(inner: Inner, layer: Layer) {
        self.inner = inner
        self.layer = layer
    }

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        layer.setup(channel: channel, logger: logger, inner: inner)
    }

    package func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
