import Logging
import PostgresKit
import SQLKit
import Synchronization

/// The hub node's connection to PostgreSQL, opened again when it was closed.
///
/// The database restarted, failed over, or ended the session (an administrator's
/// `pg_terminate_backend`, an idle timeout): without a new connection the node would hang on
/// every request until restarted (postgres-nio 1.33 never answers a query written to a closed
/// connection).
///
/// ``HubStore`` asks before each operation, holding its one-at-a-time lock, so two reconnections
/// never race. An operation already running when the connection drops fails (its transaction
/// is rolled back by the server); the next one runs on the new connection.
final class PostgresLink: Sendable {
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let current: Mutex<(connection: PostgresConnection, id: Int)>

    private init(configuration: PostgresConnection.Configuration, connection: PostgresConnection, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        current = Mutex((connection, 1))
    }

    /// Connects.
    static func connect(configuration: PostgresConnection.Configuration, logger: Logger) async throws -> PostgresLink {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        return PostgresLink(configuration: configuration, connection: connection, logger: logger)
    }

    /// The database of the connection open now.
    var database: any SQLDatabase { current.withLock { $0.connection }.sql() }

    /// A new connection's database when the current one was closed; `nil` while it is open.
    ///
    /// - Throws: The connection's error while PostgreSQL cannot be reached (the next
    ///   operation tries again).
    func reopenedIfClosed() async throws -> (any SQLDatabase)? {
        let (connection, id) = current.withLock { $0 }
        guard connection.isClosed else { return nil }
        let fresh = try await PostgresConnection.connect(configuration: configuration, id: id + 1, logger: logger)
        current.withLock { $0 = (fresh, id + 1) }
        logger.notice("The connection to PostgreSQL was closed; connected again.")
        return fresh.sql()
    }

    /// Closes the connection.
    func close() async throws {
        try await current.withLock { $0.connection }.close()
    }
}
