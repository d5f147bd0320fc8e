import FoundationEssentials
import Logging
import NetRunnerHub
import SQLKit

/// The hub's metadata through one SQL layer (sql-kit): models, versions, aliases and their
/// history, download adoption, API keys. Portable SQL only (no dialect's own syntax), so the same
/// queries run on SQLite and PostgreSQL.
///
/// Every change is one transaction; versions are numbered inside it (the highest + 1) and the
/// primary key (name, version) refuses a duplicate, so two nodes publishing the same name at
/// once get two versions, never one twice or one lost (the loser retries).
///
/// This file holds the store itself (one operation at a time, transactions, retries); its
/// operations are in `HubStore+Versions`, `+Aliases`, `+Gates`, `+Adoption` and `+Keys`.
actor HubStore {
    private(set) var database: any SQLDatabase
    let logger: Logger
    /// A new database when the connection was closed (PostgreSQL's ``PostgresLink``), asked
    /// before each operation; `nil` for SQLite, which is a file.
    private let reconnect: (@Sendable () async throws -> (any SQLDatabase)?)?

    /// Connections tried before an operation gives up on a closed PostgreSQL connection, 250 ms
    /// apart.
    static let reconnectAttempts = 20

    /// One statement sequence at a time: an SQLite connection is one session, and an actor
    /// lets another call in at every `await`, which would interleave with an open transaction.
    private var isBusy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// The operations of tasks that yield to requests (``yieldsToRequests``), let in when no
    /// request's waits, or after ``backgroundEvery`` requests' in a row.
    private var waitingBackground: [CheckedContinuation<Void, Never>] = []
    private var requestsInARow = 0

    /// Whether this task's operations wait behind the requests' (the gates' evaluations, so
    /// that a flood of them never holds an update check up).
    @TaskLocal static var yieldsToRequests = false

    /// Requests let in, with background operations waiting, before one of those is.
    static let backgroundEvery = 8

    /// Waits for the store (one statement sequence at a time), connecting again if the
    /// connection was closed; every operation starts with it and ends with ``release()``.
    func acquire() async {
        if isBusy {
            if Self.yieldsToRequests {
                await withCheckedContinuation { waitingBackground.append($0) }
            } else {
                await withCheckedContinuation { waiting.append($0) }
            }
        } else {
            isBusy = true
        }
        guard let reconnect else { return }
        // A restart or a failover closes the connection for a moment (0.2 s for a fast restart
        // here): tried again for up to 5 s, so that the operation goes through.
        for attempt in 1...Self.reconnectAttempts {
            do {
                if let fresh = try await reconnect() { database = fresh }
                return
            } catch {
                guard attempt < Self.reconnectAttempts else {
                    // Still unreachable: this operation fails at once with a 503 (a statement
                    // written to the closed connection would never be answered, and it would
                    // wait out the statement deadline), and the next one tries again.
                    logger.warning("cannot connect to PostgreSQL again: \(String(reflecting: error))")
                    database = UnreachableDatabase(base: database)
                    return
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// Lets the next operation in.
    func release() {
        if !waiting.isEmpty && (waitingBackground.isEmpty || requestsInARow < Self.backgroundEvery) {
            requestsInARow += 1
            waiting.removeFirst().resume()
        } else if !waitingBackground.isEmpty {
            requestsInARow = 0
            waitingBackground.removeFirst().resume()
        } else {
            requestsInARow = 0
            isBusy = false
        }
    }

    init(
        database: any SQLDatabase, reconnect: (@Sendable () async throws -> (any SQLDatabase)?)? = nil,
        logger: Logger
    ) {
        self.database = database
        self.reconnect = reconnect
        self.logger = logger
    }

    /// The advisory lock key nodes take to create the tables one at a time (PostgreSQL): "NRHUB".
    static let migrationLock = 0x4E_5248_5542

    /// Creates the tables if missing.
    func migrate() async throws {
        await acquire()
        defer { release() }
        let statements: [SQLQueryString] = [
            """
            CREATE TABLE IF NOT EXISTS hub_versions (name TEXT NOT NULL, version INTEGER NOT NULL, \
            sha256 TEXT NOT NULL, size BIGINT NOT NULL, format TEXT NOT NULL, task TEXT NOT NULL, \
            model_id TEXT NOT NULL, description TEXT NOT NULL, created_at TEXT NOT NULL, created_by TEXT NOT NULL, \
            deleted_at TEXT, PRIMARY KEY (name, version))
            """,
            """
            CREATE TABLE IF NOT EXISTS hub_aliases (name TEXT NOT NULL, alias TEXT NOT NULL, targets TEXT NOT NULL, \
            updated_at TEXT NOT NULL, updated_by TEXT NOT NULL, PRIMARY KEY (name, alias))
            """,
            """
            CREATE TABLE IF NOT EXISTS hub_alias_history (name TEXT NOT NULL, alias TEXT NOT NULL, \
            sequence INTEGER NOT NULL, action TEXT NOT NULL, targets TEXT NOT NULL, previous TEXT NOT NULL, \
            changed_at TEXT NOT NULL, changed_by TEXT NOT NULL, PRIMARY KEY (name, alias, sequence))
            """,
            """
            CREATE TABLE IF NOT EXISTS hub_adoption (name TEXT NOT NULL, version INTEGER NOT NULL, \
            client TEXT NOT NULL, first_seen TEXT NOT NULL, PRIMARY KEY (name, version, client))
            """,
            """
            CREATE TABLE IF NOT EXISTS hub_keys (digest TEXT PRIMARY KEY, key_name TEXT NOT NULL UNIQUE, \
            scope TEXT NOT NULL, created_at TEXT NOT NULL)
            """,
        ]
        // Two nodes starting at once on one PostgreSQL would race on every table (CREATE TABLE IF
        // NOT EXISTS is not safe against a concurrent one: the loser gets a unique violation on
        // pg_type, and a retry met the next table's race, five times in a row in a CI run): one
        // node at a time, under a transaction-scoped advisory lock; DDL is transactional there.
        // SQLite is one file that one hub opens. A failure still passes on a retry.
        let all = statements + HubStore.gateTables + HubStore.experimentTables
        try await retrying("creating the tables") {
            if database.dialect.name == "postgresql" {
                try await transaction { session in
                    try await session.raw("SELECT pg_advisory_xact_lock(\(unsafeRaw: String(Self.migrationLock)))")
                        .run()
                    for statement in all { try await session.raw(statement).run() }
                }
            } else {
                for statement in all { try await database.raw(statement).run() }
            }
        }
    }

    // MARK: Transactions

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    func transaction<Value: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> Value) async throws
        -> Value
    {
        try await database.withSession { session in
            try await session.raw("BEGIN").run()
            do {
                let value = try await body(session)
                try await session.raw("COMMIT").run()
                return value
            } catch {
                try? await session.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    /// Runs a transaction again when another node's commit got in its way (a unique key taken
    /// between its read and its write); the hub's own refusals pass through.
    func retrying<Value: Sendable>(_ what: String, _ body: () async throws -> Value) async throws -> Value {
        for attempt in 0..<5 {
            do {
                return try await body()
            } catch let error as HubError {
                throw error
            } catch {
                if attempt == 4 { throw error }
                logger.notice("\(what) retried after: \(String(reflecting: error))")
                try? await Task.sleep(for: .milliseconds(Int.random(in: 5...50)))
            }
        }
        throw HubError.conflict("\(what) kept colliding with another node")
    }

    // MARK: Helpers

    static func now() -> String {
        Date.now.ISO8601Format()
    }

    static func encodeTargets(_ targets: [HubAliasTarget]) -> String { encode(targets) }

    static func decodeTargets(_ text: String) -> [HubAliasTarget] { decode([HubAliasTarget].self, text) ?? [] }
}
