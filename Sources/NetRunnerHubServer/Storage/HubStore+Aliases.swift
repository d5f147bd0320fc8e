import NetRunnerHub
import SQLKit

/// Aliases: pointed at one version or several with weights, rolled back, with their history.
extension HubStore {
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
    }

    func aliases(of name: String) async throws -> [HubAlias] {
        await acquire()
        defer { release() }
        return try await HubStore.aliases(database, of: name)
    }

    static func aliases(_ db: any SQLDatabase, of name: String) async throws -> [HubAlias] {
        try await db.raw("SELECT * FROM hub_aliases WHERE name = \(bind: name) ORDER BY alias")
            .allRows(AliasRow.self).map(\.record)
    }

    /// One alias; with `flagged`, its ``HubAlias/gateFlags`` set.
    func alias(_ alias: String, of name: String, flagged: Bool = false) async throws -> HubAlias? {
        await acquire()
        defer { release() }
        guard
            let found = try await database.raw(
                "SELECT * FROM hub_aliases WHERE name = \(bind: name) AND alias = \(bind: alias)"
            ).firstRow(AliasRow.self)?.record
        else { return nil }
        return flagged ? try await HubStore.flagged(database, name: name, aliases: [found]).first : found
    }

    /// Points an alias at versions (each must exist, and must have passed the alias's gate
    /// unless `force` gives a reason), appending to its history; `forced` when the reason was
    /// used (a version had not passed).
    func setAlias(
        _ alias: String, of name: String, targets: [HubAliasTarget], by who: String, force: String? = nil
    ) async throws -> (alias: HubAlias, forced: Bool) {
        await acquire()
        defer { release() }
        return try await retrying("moving \(alias) of \(name)") {
            try await transaction { db in
                try await HubStore.setAlias(
                    db, name: name, alias: alias, targets: targets, by: who, action: "set", force: force)
            }
        }
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
                ).firstRow(HistoryRow.self)?.record
            else {
                throw HubError.notFound("\(name) has no alias \"\(alias)\"")
            }
            guard !last.previous.isEmpty else {
                throw HubError.conflict(
                    "\"\(alias)\" of \(name) has no earlier target to go back to (it was created by its last change)")
            }
            return try await HubStore.setAlias(
                db, name: name, alias: alias, targets: last.previous, by: who, action: "rollback"
            ).alias
        }
    }

    /// Points an alias at versions in an open transaction.
    ///
    /// A `set` is checked against the
    /// alias's gate (``checkGate(_:name:alias:targets:force:)``): refused, or with `force`
    /// recorded as `force` with its reason and what it overrode. A rollback goes back to where
    /// the alias was, which is not gated: it is how a bad version is taken away fast.
    static func setAlias(
        _ db: any SQLDatabase, name: String, alias: String, targets: [HubAliasTarget], by who: String, action: String,
        force: String? = nil
    ) async throws -> (alias: HubAlias, forced: Bool) {
        for target in targets {
            let found = try await db.raw(
                """
                SELECT version FROM hub_versions WHERE name = \(bind: name) AND version = \(bind: target.version) \
                AND deleted_at IS NULL
                """
            ).first()
            guard found != nil else { throw HubError.notFound("\(name) has no version \(target.version)") }
        }
        let current =
            try await db.raw("SELECT * FROM hub_aliases WHERE name = \(bind: name) AND alias = \(bind: alias)")
            .firstRow(AliasRow.self)?.record
        // Pointing an alias where it points already changes nothing: 200, no history entry,
        // and no gate to pass (issue 53: it answered 409 "version 2 failed" for its own target).
        if action == "set", var current, Self.sameTargets(current.targets, targets) {
            current.unchanged = true
            current.forced = false
            return (current, false)
        }
        let overridden =
            action == "set" ? try await checkGate(db, name: name, alias: alias, targets: targets, force: force) : []
        let recorded = overridden.isEmpty ? action : "force"
        let previous = current?.targets ?? []
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
            VALUES (\(bind: name), \(bind: alias), \(bind: sequence + 1), \(bind: recorded), \(bind: encoded), \
            \(bind: encodeTargets(previous)), \(bind: now), \(bind: who))
            """
        ).run()
        if let force, !overridden.isEmpty {
            try await recordOverride(
                db, name: name, alias: alias, sequence: sequence + 1, reason: force, overridden: overridden)
        }
        return (
            HubAlias(name: name, alias: alias, targets: targets, updatedAt: now, updatedBy: who), !overridden.isEmpty
        )
    }

    /// Whether two lists of targets are the same versions with the same weights, in any order.
    static func sameTargets(_ one: [HubAliasTarget], _ other: [HubAliasTarget]) -> Bool {
        one.count == other.count
            && one.sorted { $0.version < $1.version } == other.sorted { $0.version < $1.version }
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
        /// From `hub_alias_overrides`, for a forced move.
        var reason: String?
        var overridden: String?

        var record: HubAliasChange {
            HubAliasChange(
                name: name, alias: alias, sequence: sequence, action: action,
                targets: HubStore.decodeTargets(targets), previous: HubStore.decodeTargets(previous),
                changedAt: changedAt, changedBy: changedBy, reason: reason,
                // An experiment's move keeps a reason and overrides nothing: no empty list.
                overridden: overridden.flatMap { HubStore.decode([String].self, $0) }.flatMap { $0.isEmpty ? nil : $0 })
        }
    }

    func history(of alias: String, of name: String) async throws -> [HubAliasChange] {
        await acquire()
        defer { release() }
        return try await database.raw(
            """
            SELECT h.name, h.alias, h.sequence, h.action, h.targets, h.previous, h.changed_at, h.changed_by, \
            o.reason, o.overridden FROM hub_alias_history h LEFT JOIN hub_alias_overrides o \
            ON o.name = h.name AND o.alias = h.alias AND o.sequence = h.sequence \
            WHERE h.name = \(bind: name) AND h.alias = \(bind: alias) ORDER BY h.sequence
            """
        ).allRows(HistoryRow.self).map(\.record)
    }
}
