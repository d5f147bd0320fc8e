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
actor HubStore {
    private(set) var database: any SQLDatabase
    let logger: Logger
    /// A new database when the connection was closed (PostgreSQL's ``PostgresLink``), asked
    /// before each operation; `nil` for SQLite, which is a file.
    private let reconnect: (@Sendable () async throws -> (any SQLDatabase)?)?

    /// One statement sequence at a time: an SQLite connection is one session, and an actor
    /// lets another call in at every `await`, which would interleave with an open transaction.
    private var isBusy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    private func acquire() async {
        if isBusy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            isBusy = true
        }
        if let reconnect {
            do {
                if let fresh = try await reconnect() { database = fresh }
            } catch {
                // PostgreSQL cannot be reached yet: this operation fails on the closed
                // connection with its own error, and the next one tries again.
                logger.warning("cannot connect to PostgreSQL again: \(String(reflecting: error))")
            }
        }
    }

    private func release() {
        if waiting.isEmpty { isBusy = false } else { waiting.removeFirst().resume() }
    }

    init(
        database: any SQLDatabase, reconnect: (@Sendable () async throws -> (any SQLDatabase)?)? = nil,
        logger: Logger
    ) {
        self.database = database
        self.reconnect = reconnect
        self.logger = logger
    }

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
        // Two nodes starting at once may both create a table: the loser's error passes on a retry.
        try await retrying("creating the tables") {
            for statement in statements { try await database.raw(statement).run() }
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

    // MARK: Versions

    private struct VersionRow: Decodable {
        var name: String
        var version: Int
        var sha256: String
        var size: Int
        var format: String
        var task: String
        var modelId: String
        var description: String
        var createdAt: String
        var createdBy: String

        var record: HubVersion {
            HubVersion(
                name: name, version: version, sha256: sha256, size: size, format: format, task: task,
                modelID: modelId, description: description, createdAt: createdAt, createdBy: createdBy)
        }

        enum CodingKeys: String, CodingKey {
            case name, version, sha256, size, format, task, description
            case createdBy = "created_by"
            case modelId = "model_id"
            case createdAt = "created_at"
        }
    }

    /// Publishes a version: numbered the highest + 1 inside the transaction, and, if asked,
    /// an alias moved to it in the same transaction.
    func publish(
        name: String, sha256: String, size: Int, format: String, task: String, modelID: String, description: String,
        by who: String, alias: String?
    ) async throws -> HubVersion {
        await acquire()
        defer { release() }
        for attempt in 0..<5 {
            do {
                return try await transaction { db in
                    let highest = try await db.raw(
                        "SELECT MAX(version) AS top FROM hub_versions WHERE name = \(bind: name)"
                    )
                    .first()?.decode(column: "top", as: Int?.self)
                    let now = HubStore.now()
                    let record = HubVersion(
                        name: name, version: (highest ?? 0) + 1, sha256: sha256, size: size, format: format, task: task,
                        modelID: modelID, description: description, createdAt: now, createdBy: who)
                    try await db.raw(
                        """
                        INSERT INTO hub_versions (name, version, sha256, size, format, task, model_id, description, \
                        created_at, created_by) VALUES (\(bind: name), \(bind: record.version), \(bind: sha256), \
                        \(bind: size), \(bind: format), \(bind: task), \(bind: modelID), \(bind: description), \
                        \(bind: now), \(bind: who))
                        """
                    ).run()
                    if let alias {
                        _ = try await HubStore.setAlias(
                            db, name: name, alias: alias, targets: [HubAliasTarget(version: record.version)], by: who,
                            action: "set")
                    }
                    return record
                }
            } catch let error as HubError {
                throw error
            } catch {
                // Another node took the number: try again with the next.
                if attempt == 4 { throw error }
                logger.notice("publish of \(name) retried after: \(String(reflecting: error))")
                try? await Task.sleep(for: .milliseconds(Int.random(in: 5...50)))
            }
        }
        throw HubError.conflict("could not number a version of \(name)")
    }

    /// The versions of a model, oldest first (deleted ones left out).
    func versions(of name: String) async throws -> [HubVersion] {
        await acquire()
        defer { release() }
        return try await database.raw(
            "SELECT * FROM hub_versions WHERE name = \(bind: name) AND deleted_at IS NULL ORDER BY version"
        ).all(decoding: VersionRow.self).map(\.record)
    }

    /// One version (not deleted).
    func version(_ version: Int, of name: String) async throws -> HubVersion? {
        await acquire()
        defer { release() }
        return try await database.raw(
            """
            SELECT * FROM hub_versions WHERE name = \(bind: name) AND version = \(bind: version) \
            AND deleted_at IS NULL
            """
        ).first(decoding: VersionRow.self)?.record
    }

    /// The newest version with a digest (not deleted).
    func version(withDigest sha256: String, of name: String) async throws -> HubVersion? {
        await acquire()
        defer { release() }
        return try await database.raw(
            """
            SELECT * FROM hub_versions WHERE name = \(bind: name) AND sha256 = \(bind: sha256) \
            AND deleted_at IS NULL ORDER BY version DESC
            """
        ).first(decoding: VersionRow.self)?.record
    }

    /// Whether any version (of any model, deleted or not) has this digest: its blob is in use.
    func isBlobReferenced(_ sha256: String) async throws -> Bool {
        await acquire()
        defer { release() }
        return try await database.raw(
            "SELECT name FROM hub_versions WHERE sha256 = \(bind: sha256) AND deleted_at IS NULL"
        )
        .first() != nil
    }

    /// Unpublishes a version (kept in the table, marked deleted; its number is never reused).
    func delete(version: Int, of name: String, by who: String) async throws {
        await acquire()
        defer { release() }
        try await transaction { db in
            let aliases = try await HubStore.aliases(db, of: name)
            let using = aliases.filter { $0.targets.contains { $0.version == version } }.map(\.alias)
            guard using.isEmpty else {
                throw HubError.conflict(
                    "version \(version) of \(name) is what \(using.joined(separator: ", ")) points to; "
                        + "move the alias first")
            }
            try await db.raw(
                """
                UPDATE hub_versions SET deleted_at = \(bind: HubStore.now()) WHERE name = \(bind: name) \
                AND version = \(bind: version) AND deleted_at IS NULL
                """
            ).run()
        }
    }

    // MARK: Models

    /// The models, optionally those whose name or description contains `search`.
    func models(search: String?) async throws -> [HubModel] {
        await acquire()
        defer { release() }
        let rows = try await database.raw(
            "SELECT * FROM hub_versions WHERE deleted_at IS NULL ORDER BY name, version"
        ).all(decoding: VersionRow.self).map(\.record)
        let aliases = try await database.raw("SELECT * FROM hub_aliases ORDER BY name, alias")
            .all(decoding: AliasRow.self).map(\.record)
        var models: [HubModel] = []
        for (name, versions) in Dictionary(grouping: rows, by: \.name).sorted(by: { $0.key < $1.key }) {
            guard let latest = versions.last, let first = versions.first else { continue }
            if let search, !search.isEmpty {
                let needle = search.lowercased()
                guard name.lowercased().contains(needle) || latest.description.lowercased().contains(needle) else {
                    continue
                }
            }
            models.append(
                HubModel(
                    name: name, description: latest.description, latestVersion: latest.version, versions: nil,
                    aliases: aliases.filter { $0.name == name }, createdAt: first.createdAt))
        }
        return models
    }

    // MARK: Aliases

    struct AliasRow: Decodable {
        var name: String
        var alias: String
        var targets: String
        var updatedAt: String
        var updatedBy: String

        var record: HubAlias {
            HubAlias(
                name: name, alias: alias, targets: HubStore.decodeTargets(targets), updatedAt: updatedAt,
                updatedBy: updatedBy)
        }

        enum CodingKeys: String, CodingKey {
            case name, alias, targets
            case updatedAt = "updated_at"
            case updatedBy = "updated_by"
        }
    }

    func aliases(of name: String) async throws -> [HubAlias] {
        await acquire()
        defer { release() }
        return try await HubStore.aliases(database, of: name)
    }

    static func aliases(_ db: any SQLDatabase, of name: String) async throws -> [HubAlias] {
        try await db.raw("SELECT * FROM hub_aliases WHERE name = \(bind: name) ORDER BY alias")
            .all(decoding: AliasRow.self).map(\.record)
    }

    func alias(_ alias: String, of name: String) async throws -> HubAlias? {
        await acquire()
        defer { release() }
        return try await database.raw("SELECT * FROM hub_aliases WHERE name = \(bind: name) AND alias = \(bind: alias)")
            .first(decoding: AliasRow.self)?.record
    }

    /// Points an alias at versions (each must exist), appending to its history.
    func setAlias(_ alias: String, of name: String, targets: [HubAliasTarget], by who: String) async throws -> HubAlias
    {
        await acquire()
        defer { release() }
        return try await retrying("moving \(alias) of \(name)") {
            try await transaction { db in
                try await HubStore.setAlias(db, name: name, alias: alias, targets: targets, by: who, action: "set")
            }
        }
    }

    /// Runs a transaction again when another node's commit got in its way (a unique key taken
    /// between its read and its write); the hub's own refusals pass through.
    private func retrying<Value: Sendable>(_ what: String, _ body: () async throws -> Value) async throws -> Value {
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

    /// Points an alias back where it pointed before its last change.
    func rollback(_ alias: String, of name: String, by who: String) async throws -> HubAlias {
        await acquire()
        defer { release() }
        return try await retrying("rolling back \(alias) of \(name)") {
            try await rollbackTransaction(alias, of: name, by: who)
        }
    }

    private func rollbackTransaction(_ alias: String, of name: String, by who: String) async throws -> HubAlias {
        try await transaction { db in
            guard
                let last = try await db.raw(
                    """
                    SELECT * FROM hub_alias_history WHERE name = \(bind: name) AND alias = \(bind: alias) \
                    ORDER BY sequence DESC
                    """
                ).first(decoding: HistoryRow.self)?.record
            else {
                throw HubError.notFound("\(name) has no alias \"\(alias)\"")
            }
            guard !last.previous.isEmpty else {
                throw HubError.conflict(
                    "\"\(alias)\" of \(name) has no earlier target to go back to (it was created by its last change)")
            }
            return try await HubStore.setAlias(
                db, name: name, alias: alias, targets: last.previous, by: who, action: "rollback")
        }
    }

    static func setAlias(
        _ db: any SQLDatabase, name: String, alias: String, targets: [HubAliasTarget], by who: String, action: String
    ) async throws -> HubAlias {
        for target in targets {
            let found = try await db.raw(
                """
                SELECT version FROM hub_versions WHERE name = \(bind: name) AND version = \(bind: target.version) \
                AND deleted_at IS NULL
                """
            ).first()
            guard found != nil else { throw HubError.notFound("\(name) has no version \(target.version)") }
        }
        let previous =
            try await db.raw("SELECT * FROM hub_aliases WHERE name = \(bind: name) AND alias = \(bind: alias)")
            .first(decoding: AliasRow.self)?.record.targets ?? []
        let now = now()
        let encoded = encodeTargets(targets)
        try await db.raw("DELETE FROM hub_aliases WHERE name = \(bind: name) AND alias = \(bind: alias)").run()
        try await db.raw(
            """
            INSERT INTO hub_aliases (name, alias, targets, updated_at, updated_by) VALUES (\(bind: name), \
            \(bind: alias), \(bind: encoded), \(bind: now), \(bind: who))
            """
        ).run()
        let sequence =
            try await db.raw(
                "SELECT MAX(sequence) AS top FROM hub_alias_history WHERE name = \(bind: name) AND alias = \(bind: alias)"
            ).first()?.decode(column: "top", as: Int?.self) ?? 0
        try await db.raw(
            """
            INSERT INTO hub_alias_history (name, alias, sequence, action, targets, previous, changed_at, changed_by) \
            VALUES (\(bind: name), \(bind: alias), \(bind: sequence + 1), \(bind: action), \(bind: encoded), \
            \(bind: encodeTargets(previous)), \(bind: now), \(bind: who))
            """
        ).run()
        return HubAlias(name: name, alias: alias, targets: targets, updatedAt: now, updatedBy: who)
    }

    struct HistoryRow: Decodable {
        var name: String
        var alias: String
        var sequence: Int
        var action: String
        var targets: String
        var previous: String
        var changedAt: String
        var changedBy: String

        var record: HubAliasChange {
            HubAliasChange(
                name: name, alias: alias, sequence: sequence, action: action,
                targets: HubStore.decodeTargets(targets), previous: HubStore.decodeTargets(previous),
                changedAt: changedAt, changedBy: changedBy)
        }

        enum CodingKeys: String, CodingKey {
            case name, alias, sequence, action, targets, previous
            case changedBy = "changed_by"
            case changedAt = "changed_at"
        }
    }

    func history(of alias: String, of name: String) async throws -> [HubAliasChange] {
        await acquire()
        defer { release() }
        return try await database.raw(
            """
            SELECT * FROM hub_alias_history WHERE name = \(bind: name) AND alias = \(bind: alias) \
            ORDER BY sequence
            """
        ).all(decoding: HistoryRow.self).map(\.record)
    }

    // MARK: Adoption

    /// Notes that a client resolved to a version (once per client and version), while the model
    /// has fewer than `limit` such notes: the table stays bounded whatever clients send.
    func recordAdoption(name: String, version: Int, client: String, limit: Int) async throws {
        await acquire()
        defer { release() }
        let known = try await database.raw(
            """
            SELECT client FROM hub_adoption WHERE name = \(bind: name) AND version = \(bind: version) \
            AND client = \(bind: client)
            """
        ).first()
        guard known == nil else { return }
        struct Count: Decodable { var count: Int }
        let count =
            try await database.raw(
                "SELECT COUNT(*) AS count FROM hub_adoption WHERE name = \(bind: name)"
            ).first(decoding: Count.self)?.count ?? 0
        guard count < limit else { return }
        try? await database.raw(
            """
            INSERT INTO hub_adoption (name, version, client, first_seen) VALUES (\(bind: name), \(bind: version), \
            \(bind: client), \(bind: HubStore.now()))
            """
        ).run()
    }

    /// Clients per version.
    func adoption(of name: String) async throws -> [(version: Int, clients: Int)] {
        await acquire()
        defer { release() }
        struct Row: Decodable {
            var version: Int
            var clients: Int
        }
        return try await database.raw(
            """
            SELECT version, COUNT(client) AS clients FROM hub_adoption WHERE name = \(bind: name) \
            GROUP BY version ORDER BY version
            """
        ).all(decoding: Row.self).map { ($0.version, $0.clients) }
    }

    // MARK: Keys

    struct KeyRow: Decodable {
        var keyName: String
        var scope: String
        var createdAt: String

        enum CodingKeys: String, CodingKey {
            case scope
            case createdAt = "created_at"
            case keyName = "key_name"
        }
    }

    /// Stores a key by its SHA-256 (the key itself is never stored).
    func addKey(digest: String, name: String, scope: HubScope) async throws {
        await acquire()
        defer { release() }
        try await retrying("storing key \(name)") {
            try await addKeyTransaction(digest: digest, name: name, scope: scope)
        }
    }

    private func addKeyTransaction(digest: String, name: String, scope: HubScope) async throws {
        try await transaction { db in
            try await db.raw("DELETE FROM hub_keys WHERE key_name = \(bind: name)").run()
            try await db.raw(
                """
                INSERT INTO hub_keys (digest, key_name, scope, created_at) VALUES (\(bind: digest), \(bind: name), \
                \(bind: scope.rawValue), \(bind: HubStore.now()))
                """
            ).run()
        }
    }

    /// The key with a digest: its name and scope.
    func key(digest: String) async throws -> (name: String, scope: HubScope)? {
        await acquire()
        defer { release() }
        guard
            let row = try await database.raw("SELECT * FROM hub_keys WHERE digest = \(bind: digest)")
                .first(decoding: KeyRow.self), let scope = HubScope(rawValue: row.scope)
        else { return nil }
        return (row.keyName, scope)
    }

    func keys() async throws -> [(name: String, scope: String, createdAt: String)] {
        await acquire()
        defer { release() }
        return try await database.raw("SELECT * FROM hub_keys ORDER BY key_name").all(decoding: KeyRow.self)
            .map { ($0.keyName, $0.scope, $0.createdAt) }
    }

    func deleteKey(named name: String) async throws -> Bool {
        await acquire()
        defer { release() }
        let found = try await database.raw("SELECT key_name FROM hub_keys WHERE key_name = \(bind: name)").first()
        try await database.raw("DELETE FROM hub_keys WHERE key_name = \(bind: name)").run()
        return found != nil
    }

    // MARK: Helpers

    static func now() -> String {
        Date.now.ISO8601Format()
    }

    static func encodeTargets(_ targets: [HubAliasTarget]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(targets)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    static func decodeTargets(_ text: String) -> [HubAliasTarget] {
        (try? JSONDecoder().decode([HubAliasTarget].self, from: Data(text.utf8))) ?? []
    }
}
