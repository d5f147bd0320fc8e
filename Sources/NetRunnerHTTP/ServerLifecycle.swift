package import Logging
package import ServiceLifecycle
import UnixSignals

/// How both servers run: until SIGTERM or SIGINT, then the requests in flight may finish.
package enum ServerLifecycle {
    /// Runs a server until SIGTERM or SIGINT, then lets its requests in flight finish for at
    /// most `drainTimeout`; past it, they are cancelled and their connections closed.
    ///
    /// - Parameters:
    ///   - app: The server.
    ///   - drainTimeout: The longest the requests in flight may take after the signal.
    ///   - logger: The logger.
    /// - Throws: The server's errors.
    package static func runDraining(_ app: some Service, drainTimeout: Duration, logger: Logger) async throws {
        var group = ServiceGroupConfiguration(
            services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = drainTimeout
        do {
            try await ServiceGroup(configuration: group).run()
        } catch is CancellationError {
            logger.notice("stopped: requests still in flight after the drain timeout were cut")
        }
    }
}
