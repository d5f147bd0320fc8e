import Logging
import NIOCore
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
/// never race; it tries for up to 5 s (a restart), then fails the operation at once
/// (``UnreachableDatabase``). An operation already running when the connection drops fails
/// (its transaction is rolled back by the server); the next one runs on the new connection.
///
/// Every statement has a deadline: one not answered in time fails with
/// ``HubError/unavailable(_:)`` (503) and the connection is closed, so the next operation
/// connects again. This covers what the check before each operation cannot: a connection that
/// closes between the check and the statement (never answered), and a statement stuck behind
/// another session's lock.
final class PostgresLink: Sendable {
    private struct Current {
        var connection: PostgresConnection
        var id: Int
        /// A statement on it outlived its deadline: it is being closed, nothing more is sent.
        var abandoned = false
    }

    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let deadline: TimeAmount
    private let current: Mutex<Current>

    private init(
        configuration: PostgresConnection.Configuration, connection: PostgresConnection, deadline: Duration,
        logger: Logger
    ) {
        self.configuration = configuration
        self.logger = logger
        let (seconds, attoseconds) = deadline.components
        self.deadline = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        current = Mutex(Current(connection: connection, id: 1))
    }

    /// Connects.
    ///
    /// - Parameters:
    ///   - configuration: Where and as whom.
    ///   - deadline: The longest a statement may go unanswered.
    ///   - logger: The node's logger.
    /// - Returns: The link, connected.
    /// - Throws: The connection's error.
    static func connect(
        configuration: PostgresConnection.Configuration, deadline: Duration, logger: Logger
    ) async throws -> PostgresLink {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        return PostgresLink(configuration: configuration, connection: connection, deadline: deadline, logger: logger)
    }

    /// The database of the connection open now.
    var database: any SQLDatabase {
        let (connection, id) = current.withLock { ($0.connection, $0.id) }
        return guarded(connection, id: id)
    }

    private func guarded(_ connection: PostgresConnection, id: Int) -> any SQLDatabase {
        DeadlineDatabase(
            base: connection.sql(), deadline: deadline,
            isAbandoned: { [weak self] in self?.current.withLock { $0.id == id && $0.abandoned } ?? true },
            onTimeout: { [weak self] in self?.abandon(id: id) })
    }

    /// Closes connection `id` after a statement outlived its deadline (if it is still the
    /// current one), so the next operation connects again.
    private func abandon(id: Int) {
        let connection = current.withLock { current -> PostgresConnection? in
            guard current.id == id, !current.abandoned else { return nil }
            current.abandoned = true
            return current.connection
        }
        guard let connection else { return }
        logger.warning(
            "A PostgreSQL statement went unanswered for \(DeadlineDatabase.seconds(deadline)) s; the connection is closed and will be opened again."
        )
        connection.close().whenComplete { _ in }
    }

    /// A new connection's database when the current one was closed or abandoned; `nil` while
    /// it is open.
    ///
    /// - Throws: The connection's error while PostgreSQL cannot be reached (the next
    ///   operation tries again).
    func reopenedIfClosed() async throws -> (any SQLDatabase)? {
        let (connection, id, abandoned) = current.withLock { ($0.connection, $0.id, $0.abandoned) }
        guard connection.isClosed || abandoned else { return nil }
        let fresh = try await PostgresConnection.connect(configuration: configuration, id: id + 1, logger: logger)
        current.withLock { $0 = Current(connection: fresh, id: id + 1) }
        logger.notice("The connection to PostgreSQL was closed; connected again.")
        return guarded(fresh, id: id + 1)
    }

    /// Closes the connection.
    func close() async throws {
        try await current.withLock { $0.connection }.close()
    }
}

/// A database that wraps `base`: its logger, event loop, version, dialect and query log level
/// are `base`'s; only `execute` is its own.
protocol ForwardingDatabase: SQLDatabase {
    /// The database wrapped.
    var base: any SQLDatabase { get }
}

extension ForwardingDatabase {
    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }
}

/// A database whose statements fail with ``HubError/unavailable(_:)`` when not answered within
/// `deadline` (`onTimeout` is then called), or at once when the connection was given up
/// (`isAbandoned`: a transaction's ROLLBACK after its statement timed out does not wait again).
///
/// The statement itself is not cancelled (postgres-nio offers no way to): its answer, if it ever
/// comes, is dropped.
struct DeadlineDatabase: ForwardingDatabase {
    let base: any SQLDatabase
    let deadline: TimeAmount
    let isAbandoned: @Sendable () -> Bool
    let onTimeout: @Sendable () -> Void

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        let unavailable = HubError.unavailable(
            "The hub's database did not answer within \(Self.seconds(deadline)) s; try again in a moment.")
        if isAbandoned() { return eventLoop.makeFailedFuture(unavailable) }
        let promise = eventLoop.makePromise(of: Void.self)
        let onTimeout = self.onTimeout
        let timer = eventLoop.scheduleTask(in: deadline) {
            promise.fail(unavailable)
            onTimeout()
        }
        // A promise completed twice keeps its first result: a late answer after the deadline
        // is dropped.
        base.execute(sql: query, onRow).whenComplete { result in
            timer.cancel()
            promise.completeWith(result)
        }
        return promise.futureResult
    }

    /// A deadline in seconds as people write it: "30", "2.5".
    static func seconds(_ amount: TimeAmount) -> String {
        amount.nanoseconds % 1_000_000_000 == 0
            ? String(amount.nanoseconds / 1_000_000_000) : String(Double(amount.nanoseconds) / 1e9)
    }
}

/// The database of a connection that could not be opened again: every statement fails at once
/// with ``HubError/unavailable(_:)`` (503), until an operation connects again. (Like
/// ``DeadlineDatabase``, it leaves the async `execute` to SQLKit's default, which awaits this one.)
struct UnreachableDatabase: ForwardingDatabase {
    let base: any SQLDatabase

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        eventLoop.makeFailedFuture(
            HubError.unavailable("The hub cannot reach its database (PostgreSQL); try again in a moment."))
    }
}
