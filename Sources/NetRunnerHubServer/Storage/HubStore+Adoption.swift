import SQLKit

/// Adoption: which clients resolved to which version, bounded per model.
extension HubStore {
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
            ).firstRow(Count.self)?.count ?? 0
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
        ).allRows(Row.self).map { ($0.version, $0.clients) }
    }
}
