import Logging
import NetRunnerHub
import SQLKit

/// A model's versions (published, listed, unpublished) and the list of models.
extension HubStore {
    struct VersionRow: Decodable {
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
    }

    /// Publishes a version: numbered the highest + 1 inside the transaction, its evaluation
    /// queued against every gate of the model, and, if asked, an alias moved to it in the same
    /// transaction (a gated alias moves once the version passes: its evaluation `promotes`).
    ///
    /// A version of another task than the model's newest is refused (409, naming both tasks)
    /// unless `allowTaskChange`.
    func publish(
        name: String, sha256: String, size: Int, format: String, task: String, modelID: String, description: String,
        by who: String, alias: String?, allowTaskChange: Bool = false
    ) async throws -> (version: HubVersion, evaluations: [HubEvaluation]) {
        await acquire()
        defer { release() }
        for attempt in 0..<5 {
            do {
                return try await transaction { db in
                    // On PostgreSQL, nodes number one name's versions one at a time (a lock held to
                    // the commit): with retries alone, a node could lose the number five times in a
                    // row to another publishing back to back (a CI run saw a 500). SQLite's
                    // transactions are one writer at a time already.
                    if db.dialect.name == "postgresql" {
                        try await db.raw("SELECT pg_advisory_xact_lock(hashtext(\(bind: "hub_versions:" + name)))")
                            .run()
                    }
                    let highest = try await db.raw(
                        "SELECT MAX(version) AS top FROM hub_versions WHERE name = \(bind: name)"
                    )
                    .first()?.decode(column: "top", as: Int?.self)
                    if !allowTaskChange,
                        let newest = try await db.raw(
                            """
                            SELECT * FROM hub_versions WHERE name = \(bind: name) AND deleted_at IS NULL \
                            ORDER BY version DESC
                            """
                        ).firstRow(VersionRow.self), newest.task != task
                    {
                        throw HubError.conflict(
                            "\(name) is a model of the \(newest.task) task (its newest version, \(newest.version), is); "
                                + "this upload is a model of the \(task) task, and hub:\(name)@latest would change task "
                                + "under its users. Publish it under another name, or ask for the change: "
                                + "netrunner hub push --allow-task-change (?allow_task_change=true in the API).")
                    }
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
                    let gates = try await HubStore.gates(db, of: name)
                    var queued: [HubEvaluation] = []
                    for gate in gates {
                        queued.append(
                            try await HubStore.queueEvaluation(
                                db, name: name, version: record.version, gate: gate, promotes: gate.alias == alias))
                    }
                    if let alias, !gates.contains(where: { $0.alias == alias }) {
                        _ = try await HubStore.setAlias(
                            db, name: name, alias: alias, targets: [HubAliasTarget(version: record.version)], by: who,
                            action: "set")
                    }
                    return (record, queued)
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
        ).allRows(VersionRow.self).map(\.record)
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
        ).firstRow(VersionRow.self)?.record
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
        ).firstRow(VersionRow.self)?.record
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

    /// The models, optionally those whose name or description contains `search`.
    func models(search: String?) async throws -> [HubModel] {
        await acquire()
        defer { release() }
        let rows = try await database.raw(
            "SELECT * FROM hub_versions WHERE deleted_at IS NULL ORDER BY name, version"
        ).allRows(VersionRow.self).map(\.record)
        let aliases = try await database.raw("SELECT * FROM hub_aliases ORDER BY name, alias")
            .allRows(AliasRow.self).map(\.record)
        var models: [HubModel] = []
        for (name, versions) in Dictionary(grouping: rows, by: \.name).sorted(by: { $0.key < $1.key }) {
            guard let latest = versions.last, let first = versions.first else { continue }
            let own = aliases.filter { $0.name == name }
            let described = HubStore.describedVersion(versions, aliases: own) ?? latest
            if let search, !search.isEmpty {
                let needle = search.lowercased()
                guard name.lowercased().contains(needle) || described.description.lowercased().contains(needle) else {
                    continue
                }
            }
            models.append(
                HubModel(
                    name: name, description: described.description, latestVersion: latest.version, versions: nil,
                    aliases: try await HubStore.flagged(database, name: name, aliases: own), createdAt: first.createdAt,
                    descriptionVersion: described.version))
        }
        return models
    }
}
