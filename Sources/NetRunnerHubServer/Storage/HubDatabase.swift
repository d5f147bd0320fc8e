import FoundationEssentials
import Logging
import PostgresKit
import SQLKit
import SQLiteKit
import ServiceLifecycle
import Synchronization

/// The hub's database link as a service of its application: the embedded SQLite database of
/// the data folder, or a PostgreSQL connection (``PostgresLink``, opened again when it was
/// closed).
///
/// ``open(_:logger:)`` connects before the application is built (its tables are made then,
/// before the server accepts a connection); the service closes the link when the application
/// stops: at the graceful shutdown, after the server has drained and the gates have stopped
/// (services stop in the reverse order of their start), or when the group is cancelled.
final class HubDatabase: Service, Sendable {
    /// The database to run statements on.
    let database: any SQLDatabase
    /// A new database when the connection was closed (PostgreSQL); `nil` for SQLite, a file.
    let reconnect: (@Sendable () async throws -> (any SQLDatabase)?)?
    private let closing: @Sendable () async throws -> Void
    /// Whether ``close()`` was called (the link is closed once).
    private let closed = Mutex(false)

    private init(
        database: any SQLDatabase, reconnect: (@Sendable () async throws -> (any SQLDatabase)?)?,
        close: @escaping @Sendable () async throws -> Void
    ) {
        self.database = database
        self.reconnect = reconnect
        closing = close
    }

    /// Connects to the configuration's database: PostgreSQL at its `databaseURL`, else
    /// `hub.sqlite` in its data folder.
    ///
    /// - Parameters:
    ///   - configuration: The hub's configuration.
    ///   - logger: The logger.
    /// - Returns: The link, open; run it as a service (or ``close()`` it).
    /// - Throws: ``HubStartError`` when PostgreSQL cannot be reached; SQLite's errors.
    static func open(_ configuration: HubServer.Configuration, logger: Logger) async throws -> HubDatabase {
        guard let url = configuration.databaseURL else {
            return try await openSQLite(folder: configuration.dataFolder, logger: logger)
        }
        let link: PostgresLink
        do {
            let settings = try SQLPostgresConfiguration(url: url)
            link = try await PostgresLink.connect(
                configuration: settings.coreConfiguration, deadline: configuration.databaseDeadline, logger: logger)
        } catch {
            throw HubStartError(
                message: "cannot open the PostgreSQL database \(HubServer.redacted(url)): \(String(reflecting: error))")
        }
        return HubDatabase(
            database: link.database, reconnect: { try await link.reopenedIfClosed() }, close: { try await link.close() }
        )
    }

    /// The embedded SQLite database of a data folder (`hub.sqlite`), in WAL mode with full
    /// synchronous writes: a crash leaves the last committed state; readers do not block the
    /// writer.
    ///
    /// - Parameters:
    ///   - folder: The data folder.
    ///   - logger: The logger.
    /// - Returns: The link, open.
    /// - Throws: SQLite's errors.
    static func openSQLite(folder: String, logger: Logger) async throws -> HubDatabase {
        let sqlite = try await SQLiteConnection.open(storage: .file(path: folder + "/hub.sqlite"), logger: logger)
        let database = sqlite.sql()
        do {
            try await database.raw("PRAGMA journal_mode=WAL").run()
            try await database.raw("PRAGMA synchronous=FULL").run()
        } catch {
            try? await sqlite.close()
            throw error
        }
        return HubDatabase(database: database, reconnect: nil, close: { try await sqlite.close() })
    }

    /// Whether ``close()`` was called.
    var isClosed: Bool { closed.withLock { $0 } }

    /// Until the graceful shutdown (or the group's cancellation: a failed bind, a drain past
    /// `--drain-timeout`), then closes the link.
    func run() async throws {
        try? await gracefulShutdown()
        try await close()
    }

    /// Closes the link (once: later calls return at once).
    ///
    /// On a task of its own: closing on a cancelled task could give up before the connection was
    /// closed, and SQLiteNIO asserts in a connection's deinit that it was (a debug-build test run
    /// died of it). An unstructured task is not cancelled with the caller's.
    func close() async throws {
        let wasClosed = closed.withLock { closed in
            defer { closed = true }
            return closed
        }
        guard !wasClosed else { return }
        try await Task { try await closing() }.value
    }
}
