import NetRunnerHub
import SQLKit

/// API keys, stored by their SHA-256 with a name and a scope.
extension HubStore {
    struct KeyRow: Decodable {
        var keyName: String
        var scope: String
        var createdAt: String
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
                .firstRow(KeyRow.self), let scope = HubScope(rawValue: row.scope)
        else { return nil }
        return (row.keyName, scope)
    }

    func keys() async throws -> [(name: String, scope: String, createdAt: String)] {
        await acquire()
        defer { release() }
        return try await database.raw("SELECT * FROM hub_keys ORDER BY key_name").allRows(KeyRow.self)
            .map { ($0.keyName, $0.scope, $0.createdAt) }
    }

    func deleteKey(named name: String) async throws -> Bool {
        await acquire()
        defer { release() }
        let found = try await database.raw("SELECT key_name FROM hub_keys WHERE key_name = \(bind: name)").first()
        try await database.raw("DELETE FROM hub_keys WHERE key_name = \(bind: name)").run()
        return found != nil
    }
}
