import FoundationEssentials
import NetRunnerHub
import NetRunnerSupport
import SQLKit

/// Gates: what a version must pass before an alias may point to it, each version's evaluation
/// against each gate, and the moves an admin forced past one.
extension HubStore {
    static let gateTables: [SQLQueryString] = [
        """
        CREATE TABLE IF NOT EXISTS hub_gates (name TEXT NOT NULL, alias TEXT NOT NULL, bundles TEXT NOT NULL, \
        rules TEXT NOT NULL, revision INTEGER NOT NULL, updated_at TEXT NOT NULL, updated_by TEXT NOT NULL, \
        PRIMARY KEY (name, alias))
        """,
        """
        CREATE TABLE IF NOT EXISTS hub_evaluations (name TEXT NOT NULL, version INTEGER NOT NULL, \
        alias TEXT NOT NULL, gate_revision INTEGER NOT NULL, status TEXT NOT NULL, baseline INTEGER, \
        metrics TEXT NOT NULL, baseline_metrics TEXT NOT NULL, failures TEXT NOT NULL, message TEXT, \
        promotes INTEGER NOT NULL, queued_at TEXT NOT NULL, finished_at TEXT, PRIMARY KEY (name, version, alias))
        """,
        """
        CREATE TABLE IF NOT EXISTS hub_alias_overrides (name TEXT NOT NULL, alias TEXT NOT NULL, \
        sequence INTEGER NOT NULL, reason TEXT NOT NULL, overridden TEXT NOT NULL, PRIMARY KEY (name, alias, sequence))
        """,
    ]

    struct GateRow: Decodable {
        var name: String
        var alias: String
        var bundles: String
        var rules: String
        var revision: Int
        var updatedAt: String
        var updatedBy: String

        var record: HubGate {
            HubGate(
                name: name, alias: alias, bundles: HubStore.decode([String].self, bundles) ?? [],
                rules: HubStore.decode([HubGateRule].self, rules) ?? [], revision: revision, updatedAt: updatedAt,
                updatedBy: updatedBy)
        }
    }

    struct EvaluationRow: Decodable {
        var name: String
        var version: Int
        var alias: String
        var gateRevision: Int
        var status: String
        var baseline: Int?
        var metrics: String
        var baselineMetrics: String
        var failures: String
        var message: String?
        var promotes: Int
        var queuedAt: String
        var finishedAt: String?

        var record: HubEvaluation {
            HubEvaluation(
                name: name, version: version, alias: alias, gateRevision: gateRevision,
                status: HubGateStatus(rawValue: status) ?? .pending, baseline: baseline,
                metrics: HubStore.decode([String: [String: Double]].self, metrics) ?? [:],
                baselineMetrics: HubStore.decode([String: [String: Double]].self, baselineMetrics) ?? [:],
                failures: HubStore.decode([HubGateFailure].self, failures) ?? [], message: message,
                promotes: promotes != 0, queuedAt: queuedAt, finishedAt: finishedAt)
        }
    }

    // MARK: Gates

    func gates(of name: String) async throws -> [HubGate] {
        await acquire()
        defer { release() }
        return try await HubStore.gates(database, of: name)
    }

    static func gates(_ db: any SQLDatabase, of name: String) async throws -> [HubGate] {
        try await db.raw("SELECT * FROM hub_gates WHERE name = \(bind: name) ORDER BY alias")
            .allRows(GateRow.self).map(\.record)
    }

    static func gate(_ db: any SQLDatabase, alias: String, of name: String) async throws -> HubGate? {
        try await db.raw("SELECT * FROM hub_gates WHERE name = \(bind: name) AND alias = \(bind: alias)")
            .firstRow(GateRow.self)?.record
    }

    func gate(_ alias: String, of name: String) async throws -> HubGate? {
        await acquire()
        defer { release() }
        return try await HubStore.gate(database, alias: alias, of: name)
    }

    /// Sets an alias's gate (its revision raised) and queues every published version's
    /// evaluation against it afresh; returns the gate and the evaluations to run.
    func setGate(_ alias: String, of name: String, bundles: [String], rules: [HubGateRule], by who: String)
        async throws -> (HubGate, [HubEvaluation])
    {
        await acquire()
        defer { release() }
        return try await retrying("setting the gate of \(alias) of \(name)") {
            try await transaction { db in
                let revision = (try await HubStore.gate(db, alias: alias, of: name)?.revision ?? 0) + 1
                let gate = HubGate(
                    name: name, alias: alias, bundles: bundles, rules: rules, revision: revision,
                    updatedAt: HubStore.now(), updatedBy: who)
                try await db.raw("DELETE FROM hub_gates WHERE name = \(bind: name) AND alias = \(bind: alias)").run()
                try await db.raw(
                    """
                    INSERT INTO hub_gates (name, alias, bundles, rules, revision, updated_at, updated_by) VALUES \
                    (\(bind: name), \(bind: alias), \(bind: HubStore.encode(bundles)), \(bind: HubStore.encode(rules)), \
                    \(bind: revision), \(bind: gate.updatedAt), \(bind: who))
                    """
                ).run()
                let versions = try await db.raw(
                    "SELECT version FROM hub_versions WHERE name = \(bind: name) AND deleted_at IS NULL ORDER BY version"
                ).all().map { try $0.decode(column: "version", as: Int.self) }
                var queued: [HubEvaluation] = []
                for version in versions {
                    queued.append(try await HubStore.queueEvaluation(db, name: name, version: version, gate: gate))
                }
                return (gate, queued)
            }
        }
    }

    /// Removes an alias's gate and its evaluations.
    func removeGate(_ alias: String, of name: String) async throws {
        await acquire()
        defer { release() }
        try await retrying("removing the gate of \(alias) of \(name)") {
            try await transaction { db in
                guard try await HubStore.gate(db, alias: alias, of: name) != nil else {
                    throw HubError.notFound("\(name) has no gate on \"\(alias)\".")
                }
                try await db.raw("DELETE FROM hub_gates WHERE name = \(bind: name) AND alias = \(bind: alias)").run()
                try await db.raw("DELETE FROM hub_evaluations WHERE name = \(bind: name) AND alias = \(bind: alias)")
                    .run()
            }
        }
    }

    // MARK: Evaluations

    /// A version's evaluation against `gate` made pending (replacing any earlier one), with the
    /// alias's current target as its baseline (the runner takes the alias's target again when
    /// the evaluation starts).
    static func queueEvaluation(
        _ db: any SQLDatabase, name: String, version: Int, gate: HubGate, promotes: Bool = false
    ) async throws -> HubEvaluation {
        let baseline = try await HubStore.baseline(db, alias: gate.alias, of: name)
        let evaluation = HubEvaluation(
            name: name, version: version, alias: gate.alias, gateRevision: gate.revision, status: .pending,
            baseline: baseline == version ? nil : baseline, promotes: promotes, queuedAt: now())
        try await db.raw(
            """
            DELETE FROM hub_evaluations WHERE name = \(bind: name) AND version = \(bind: version) \
            AND alias = \(bind: gate.alias)
            """
        ).run()
        try await insert(db, evaluation)
        return evaluation
    }

    /// The version an alias serves now, the baseline of its gate: the only one, or a staged
    /// rollout's largest share; `nil` when the alias points nowhere.
    func baseline(of alias: String, of name: String) async throws -> Int? {
        await acquire()
        defer { release() }
        return try await HubStore.baseline(database, alias: alias, of: name)
    }

    static func baseline(_ db: any SQLDatabase, alias: String, of name: String) async throws -> Int? {
        let targets =
            try await db.raw("SELECT * FROM hub_aliases WHERE name = \(bind: name) AND alias = \(bind: alias)")
            .firstRow(AliasRow.self)?.record.targets ?? []
        return targets.max { $0.weight < $1.weight }?.version
    }

    static func insert(_ db: any SQLDatabase, _ evaluation: HubEvaluation) async throws {
        try await db.raw(
            """
            INSERT INTO hub_evaluations (name, version, alias, gate_revision, status, baseline, metrics, \
            baseline_metrics, failures, message, promotes, queued_at, finished_at) VALUES \
            (\(bind: evaluation.name), \(bind: evaluation.version), \(bind: evaluation.alias), \
            \(bind: evaluation.gateRevision), \(bind: evaluation.status.rawValue), \(bind: evaluation.baseline), \
            \(bind: encode(evaluation.metrics)), \(bind: encode(evaluation.baselineMetrics)), \
            \(bind: encode(evaluation.failures)), \(bind: evaluation.message), \(bind: evaluation.promotes ? 1 : 0), \
            \(bind: evaluation.queuedAt), \(bind: evaluation.finishedAt))
            """
        ).run()
    }

    /// A model's evaluations (of one version, or of all), by version then alias.
    func evaluations(of name: String, version: Int? = nil) async throws -> [HubEvaluation] {
        await acquire()
        defer { release() }
        let rows: [EvaluationRow]
        if let version {
            rows = try await database.raw(
                "SELECT * FROM hub_evaluations WHERE name = \(bind: name) AND version = \(bind: version) ORDER BY alias"
            ).allRows(EvaluationRow.self)
        } else {
            rows = try await database.raw(
                "SELECT * FROM hub_evaluations WHERE name = \(bind: name) ORDER BY version, alias"
            ).allRows(EvaluationRow.self)
        }
        return rows.map(\.record)
    }

    /// Every pending evaluation of every model (to run again after a restart).
    func pendingEvaluations() async throws -> [HubEvaluation] {
        await acquire()
        defer { release() }
        return try await database.raw("SELECT * FROM hub_evaluations WHERE status = 'pending' ORDER BY queued_at")
            .allRows(EvaluationRow.self).map(\.record)
    }

    /// A model's oldest pending evaluations against its gates as they are now, at most `limit`
    /// (those of a gate set since are stale and never run): the runner reads back those that
    /// waited in the store for room (``GateQueue``).
    ///
    /// On a shared PostgreSQL they include another node's; one evaluated twice is recorded once
    /// (``finish(_:)`` takes the first).
    func pendingEvaluations(of name: String, limit: Int) async throws -> [HubEvaluation] {
        await acquire()
        defer { release() }
        return try await database.raw(
            """
            SELECT e.* FROM hub_evaluations e JOIN hub_gates g ON g.name = e.name AND g.alias = e.alias \
            AND g.revision = e.gate_revision WHERE e.name = \(bind: name) AND e.status = 'pending' \
            ORDER BY e.queued_at, e.version, e.alias LIMIT \(bind: max(1, min(limit, 10_000)))
            """
        ).allRows(EvaluationRow.self).map(\.record)
    }

    /// Queues, as pending, every published version that has no evaluation against a gate of its
    /// model as the gate is now, and returns them to run.
    ///
    /// A hub queues a version's evaluations when it is published and when a gate is set; a
    /// version published by a node of an older release, which knew no gates (a downgrade, or an
    /// old node left running in a rolling upgrade on a shared PostgreSQL), has none, and its
    /// alias may have moved to it unevaluated. Run at each start and after each evaluation pass
    /// (``GateRunner``), so that such a version is evaluated and its alias flagged until then.
    func queueUnevaluated() async throws -> [HubEvaluation] {
        await acquire()
        defer { release() }
        return try await retrying("queueing the versions no gate has evaluated") {
            try await transaction { db in
                let gates = try await db.raw("SELECT * FROM hub_gates ORDER BY name, alias")
                    .allRows(GateRow.self).map(\.record)
                var queued: [HubEvaluation] = []
                for gate in gates {
                    let versions = try await db.raw(
                        """
                        SELECT version FROM hub_versions WHERE name = \(bind: gate.name) AND deleted_at IS NULL \
                        ORDER BY version
                        """
                    ).all().map { try $0.decode(column: "version", as: Int.self) }
                    let evaluated = Set(
                        try await db.raw(
                            """
                            SELECT version FROM hub_evaluations WHERE name = \(bind: gate.name) \
                            AND alias = \(bind: gate.alias) AND gate_revision = \(bind: gate.revision)
                            """
                        ).all().map { try $0.decode(column: "version", as: Int.self) })
                    for version in versions where !evaluated.contains(version) {
                        queued.append(
                            try await HubStore.queueEvaluation(db, name: gate.name, version: version, gate: gate))
                    }
                }
                return queued
            }
        }
    }

    /// Records a finished evaluation, unless it is stale.
    ///
    /// Stale: the gate changed or the version was queued again meanwhile (`nil` comes back).
    /// A passed evaluation of a version
    /// published to the alias moves the alias to it, in the same transaction.
    func finish(_ evaluation: HubEvaluation) async throws -> (recorded: HubEvaluation, promoted: HubAlias?)? {
        await acquire()
        defer { release() }
        return try await retrying("recording the evaluation of \(evaluation.name)@\(evaluation.version)") {
            try await transaction { db in
                guard let gate = try await HubStore.gate(db, alias: evaluation.alias, of: evaluation.name),
                    gate.revision == evaluation.gateRevision,
                    let current = try await db.raw(
                        """
                        SELECT * FROM hub_evaluations WHERE name = \(bind: evaluation.name) \
                        AND version = \(bind: evaluation.version) AND alias = \(bind: evaluation.alias)
                        """
                    ).firstRow(EvaluationRow.self)?.record,
                    current.queuedAt == evaluation.queuedAt, current.status == .pending
                else { return nil }
                try await db.raw(
                    """
                    DELETE FROM hub_evaluations WHERE name = \(bind: evaluation.name) \
                    AND version = \(bind: evaluation.version) AND alias = \(bind: evaluation.alias)
                    """
                ).run()
                try await HubStore.insert(db, evaluation)
                var promoted: HubAlias?
                if evaluation.status == .passed && evaluation.promotes {
                    promoted = try await HubStore.setAlias(
                        db, name: evaluation.name, alias: evaluation.alias,
                        targets: [HubAliasTarget(version: evaluation.version)], by: "gate", action: "promote"
                    ).alias
                }
                return (evaluation, promoted)
            }
        }
    }

    // MARK: The gate on aliases

    /// Refuses to point a gated alias at versions that have not passed its gate, naming each
    /// version's status and failing rules; with `force`, records the override instead (the
    /// alias's next history entry, with the reason and what was overridden).
    static func checkGate(
        _ db: any SQLDatabase, name: String, alias: String, targets: [HubAliasTarget], force: String?
    ) async throws -> [String] {
        guard let gate = try await gate(db, alias: alias, of: name) else { return [] }
        var problems: [String] = []
        for target in targets {
            let evaluation = try await db.raw(
                """
                SELECT * FROM hub_evaluations WHERE name = \(bind: name) AND version = \(bind: target.version) \
                AND alias = \(bind: alias)
                """
            ).firstRow(EvaluationRow.self)?.record
            guard let evaluation, evaluation.gateRevision == gate.revision else {
                problems.append("version \(target.version) has not been evaluated against this gate")
                continue
            }
            switch evaluation.status {
            case .passed: continue
            case .pending: problems.append("version \(target.version)'s evaluation is still pending")
            case .failed:
                let reasons = evaluation.failures.map { "\($0.reason) (\($0.bundle))" }
                problems.append(
                    "version \(target.version) failed: "
                        + (reasons.isEmpty
                            ? (evaluation.message.map { GateMessages.scrubbed($0) } ?? "its evaluation failed")
                            : reasons.joined(separator: "; ")))
            }
        }
        guard !problems.isEmpty, force == nil else { return problems }
        throw HubError.gateRefused(
            "\"\(alias)\" of \(name) is gated (revision \(gate.revision)): " + problems.joined(separator: "; ")
                + ". An admin may force the move, giving a reason (netrunner hub alias --force REASON; "
                + "\"force\": true with a \"reason\" in the API).")
    }

    /// Writes an override beside the alias's history entry `sequence`.
    static func recordOverride(
        _ db: any SQLDatabase, name: String, alias: String, sequence: Int, reason: String, overridden: [String]
    ) async throws {
        try await db.raw(
            """
            INSERT INTO hub_alias_overrides (name, alias, sequence, reason, overridden) VALUES (\(bind: name), \
            \(bind: alias), \(bind: sequence), \(bind: reason), \(bind: encode(overridden)))
            """
        ).run()
    }

    // MARK: JSON columns

    static func encode(_ value: some Encodable) -> String {
        (try? JSONCoding.encoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ text: String) -> Value? {
        try? JSONDecoder().decode(type, from: Data(text.utf8))
    }
}
