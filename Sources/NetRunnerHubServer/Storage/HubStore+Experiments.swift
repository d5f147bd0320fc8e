import FoundationEssentials
import NetRunnerHub
import SQLKit

/// Experiments: started on an alias (its targets set to the variants' weights, through the
/// alias-setting code and its history), stopped (back to the baseline), concluded (the winner
/// through the alias's gate); their arms' bounded counts and their history.
///
/// What is kept is bounded whatever clients send: per arm one row of counters and a latency
/// sketch (``ExperimentArmCounts``); per client one row (at most ``experimentClientLimit`` per
/// experiment); per client and UTC day one count (only today's rows are kept); and the ids of
/// the newest ``experimentSeenLimit`` events per experiment, so that a batch sent again counts
/// once (an event retried after that many newer ones would count twice).
extension HubStore {
    /// The most clients counted per experiment; past it, new clients' events are refused.
    static let experimentClientLimit = 100_000
    /// The newest event ids kept per experiment to refuse a retried event.
    static let experimentSeenLimit = 200_000
    /// The most events counted per client per UTC day; past it, refused.
    static let experimentDailyLimit = 10_000

    static let experimentTables: [SQLQueryString] = [
        // running_key is "name/alias" while running, else NULL: UNIQUE makes one running
        // experiment per alias, even for two nodes starting one at once.
        """
        CREATE TABLE IF NOT EXISTS hub_experiments (id INTEGER PRIMARY KEY, name TEXT NOT NULL, alias TEXT NOT NULL, \
        record TEXT NOT NULL, status TEXT NOT NULL, running_key TEXT UNIQUE)
        """,
        """
        CREATE TABLE IF NOT EXISTS hub_experiment_arms (experiment_id INTEGER NOT NULL, arm INTEGER NOT NULL, \
        counts TEXT NOT NULL, PRIMARY KEY (experiment_id, arm))
        """,
        """
        CREATE TABLE IF NOT EXISTS hub_experiment_clients (experiment_id INTEGER NOT NULL, client TEXT NOT NULL, \
        arm INTEGER NOT NULL, crashed INTEGER NOT NULL, first_seen TEXT NOT NULL, PRIMARY KEY (experiment_id, client))
        """,
        """
        CREATE TABLE IF NOT EXISTS hub_experiment_client_days (experiment_id INTEGER NOT NULL, client TEXT NOT NULL, \
        day TEXT NOT NULL, events INTEGER NOT NULL, PRIMARY KEY (experiment_id, client, day))
        """,
        """
        CREATE TABLE IF NOT EXISTS hub_experiment_seen (experiment_id INTEGER NOT NULL, client TEXT NOT NULL, \
        event_id TEXT NOT NULL, sequence BIGINT NOT NULL, PRIMARY KEY (experiment_id, client, event_id))
        """,
        """
        CREATE TABLE IF NOT EXISTS hub_experiment_history (experiment_id INTEGER NOT NULL, sequence INTEGER NOT NULL, \
        action TEXT NOT NULL, changed_by TEXT NOT NULL, changed_at TEXT NOT NULL, details TEXT NOT NULL, \
        PRIMARY KEY (experiment_id, sequence))
        """,
    ]

    struct ExperimentRow: Decodable {
        var id: Int
        var record: String
    }

    static func experiment(_ db: any SQLDatabase, id: Int, of name: String) async throws -> HubExperiment? {
        guard
            let row = try await db.raw(
                "SELECT id, record FROM hub_experiments WHERE id = \(bind: id) AND name = \(bind: name)"
            ).firstRow(ExperimentRow.self)
        else { return nil }
        return decode(HubExperiment.self, row.record)
    }

    static func runningExperiment(_ db: any SQLDatabase, name: String, alias: String) async throws -> HubExperiment? {
        try await db.raw(
            "SELECT id, record FROM hub_experiments WHERE running_key = \(bind: "\(name)/\(alias)")"
        ).firstRow(ExperimentRow.self).flatMap { decode(HubExperiment.self, $0.record) }
    }

    static func save(_ db: any SQLDatabase, _ experiment: HubExperiment) async throws {
        let key: String? = experiment.status == .running ? "\(experiment.name)/\(experiment.alias)" : nil
        try await db.raw(
            """
            UPDATE hub_experiments SET record = \(bind: encode(experiment)), status = \(bind: experiment.status.rawValue), \
            running_key = \(bind: key) WHERE id = \(bind: experiment.id)
            """
        ).run()
    }

    static func appendHistory(_ db: any SQLDatabase, id: Int, action: String, by who: String, details: String)
        async throws
    {
        let top =
            try await db.raw(
                "SELECT MAX(sequence) AS top FROM hub_experiment_history WHERE experiment_id = \(bind: id)"
            ).first()?.decode(column: "top", as: Int?.self) ?? 0
        try await db.raw(
            """
            INSERT INTO hub_experiment_history (experiment_id, sequence, action, changed_by, changed_at, details) \
            VALUES (\(bind: id), \(bind: top + 1), \(bind: action), \(bind: who), \(bind: now()), \(bind: details))
            """
        ).run()
    }

    /// Starts an experiment: refused with 409 while another runs on the alias; the alias then
    /// serves the variants by weight (A/A: the baseline), recorded in its history as
    /// `experiment-start` (not gated: the gate decides at the conclusion).
    func startExperiment(_ draft: HubExperiment) async throws -> HubExperiment {
        await acquire()
        defer { release() }
        return try await retrying("starting an experiment on \(draft.alias) of \(draft.name)") {
            try await transaction { db in
                if let running = try await HubStore.runningExperiment(db, name: draft.name, alias: draft.alias) {
                    throw HubError.conflict(
                        "Experiment \(running.id) is running on \"\(draft.alias)\" of \(draft.name): stop or conclude "
                            + "it first (one running experiment per alias).")
                }
                let top =
                    try await db.raw("SELECT MAX(id) AS top FROM hub_experiments").first()?
                    .decode(column: "top", as: Int?.self) ?? 0
                var experiment = draft
                experiment.id = top + 1
                experiment.startedAt = HubStore.now()
                _ = try await HubStore.setAlias(
                    db, name: draft.name, alias: draft.alias, targets: experiment.aliasTargets, by: draft.startedBy,
                    action: "experiment-start")
                try await db.raw(
                    """
                    INSERT INTO hub_experiments (id, name, alias, record, status, running_key) VALUES \
                    (\(bind: experiment.id), \(bind: draft.name), \(bind: draft.alias), \(bind: HubStore.encode(experiment)), \
                    'running', \(bind: "\(draft.name)/\(draft.alias)"))
                    """
                ).run()
                for index in experiment.variants.indices {
                    try await db.raw(
                        """
                        INSERT INTO hub_experiment_arms (experiment_id, arm, counts) VALUES (\(bind: experiment.id), \
                        \(bind: index), \(bind: HubStore.encode(try ExperimentArmCounts())))
                        """
                    ).run()
                }
                try await HubStore.appendHistory(
                    db, id: experiment.id, action: "start", by: draft.startedBy,
                    details: "\(experiment.mode.rawValue): \(experiment.variants.summary) on \(draft.alias), baseline "
                        + "\(experiment.baseline), goal \(experiment.goal)")
                return experiment
            }
        }
    }

    /// A model's experiments, the newest first.
    func experiments(of name: String) async throws -> [HubExperiment] {
        await acquire()
        defer { release() }
        return try await database.raw(
            "SELECT id, record FROM hub_experiments WHERE name = \(bind: name) ORDER BY id DESC"
        ).allRows(ExperimentRow.self).compactMap { HubStore.decode(HubExperiment.self, $0.record) }
    }

    /// One experiment with its figures and its history.
    func experimentDetail(_ id: Int, of name: String) async throws -> HubExperimentDetail? {
        await acquire()
        defer { release() }
        guard let experiment = try await HubStore.experiment(database, id: id, of: name) else { return nil }
        let counts = try await HubStore.armCounts(database, experiment)
        struct Row: Decodable {
            var sequence: Int
            var action: String
            var changedBy: String
            var changedAt: String
            var details: String
        }
        let history = try await database.raw(
            "SELECT * FROM hub_experiment_history WHERE experiment_id = \(bind: id) ORDER BY sequence"
        ).allRows(Row.self).map {
            HubExperimentChange(
                sequence: $0.sequence, action: $0.action, by: $0.changedBy, at: $0.changedAt, details: $0.details)
        }
        return HubExperimentDetail(
            experiment: experiment, analysis: ExperimentAnalyzer.analyze(experiment, counts: counts).analysis,
            history: history)
    }

    static func armCounts(_ db: any SQLDatabase, _ experiment: HubExperiment) async throws -> [ExperimentArmCounts] {
        struct Row: Decodable {
            var arm: Int
            var counts: String
        }
        let rows = try await db.raw(
            "SELECT arm, counts FROM hub_experiment_arms WHERE experiment_id = \(bind: experiment.id) ORDER BY arm"
        ).allRows(Row.self)
        var counts = try experiment.variants.map { _ in try ExperimentArmCounts() }
        for row in rows where counts.indices.contains(row.arm) {
            if let decoded = decode(ExperimentArmCounts.self, row.counts) { counts[row.arm] = decoded }
        }
        return counts
    }

    /// Stops a running experiment: the alias back on the baseline (`experiment-stop` in its
    /// history, by `who`, with `reason` beside it when given), the experiment `stopped`.
    func stopExperiment(_ id: Int, of name: String, by who: String) async throws -> HubExperiment {
        await acquire()
        defer { release() }
        return try await retrying("stopping experiment \(id) of \(name)") {
            try await transaction { db in
                guard let experiment = try await HubStore.experiment(db, id: id, of: name) else {
                    throw HubError.notFound("\(name) has no experiment \(id).")
                }
                return try await HubStore.stop(db, experiment, by: who, reason: "stopped by \(who)", action: "stop")
            }
        }
    }

    /// Stops `experiment` in an open transaction (``stopExperiment(_:of:by:)``, a guardrail).
    static func stop(_ db: any SQLDatabase, _ experiment: HubExperiment, by who: String, reason: String, action: String)
        async throws -> HubExperiment
    {
        guard experiment.status == .running else {
            throw HubError.conflict(
                "Experiment \(experiment.id) of \(experiment.name) is \(experiment.status.rawValue) already.")
        }
        var stopped = experiment
        stopped.status = .stopped
        stopped.endedAt = now()
        stopped.endedBy = who
        stopped.outcome = reason
        let (moved, _) = try await setAlias(
            db, name: experiment.name, alias: experiment.alias, targets: [HubAliasTarget(version: experiment.baseline)],
            by: who, action: "experiment-stop")
        try await noteReason(db, moved, reason: "experiment \(experiment.id): \(reason)")
        try await save(db, stopped)
        try await appendHistory(db, id: experiment.id, action: action, by: who, details: reason)
        return stopped
    }

    /// Writes `reason` beside the alias's newest history entry (its `reason` in `hub history`).
    static func noteReason(_ db: any SQLDatabase, _ alias: HubAlias, reason: String) async throws {
        let sequence =
            try await db.raw(
                """
                SELECT MAX(sequence) AS top FROM hub_alias_history WHERE name = \(bind: alias.name) \
                AND alias = \(bind: alias.alias)
                """
            ).first()?.decode(column: "top", as: Int?.self) ?? 0
        try await recordOverride(
            db, name: alias.name, alias: alias.alias, sequence: sequence, reason: String(reason.prefix(2_000)),
            overridden: [])
    }

    /// Concludes a running experiment through the alias's gate.
    ///
    /// `winner` (a variant's version; the baseline after an A/A test) becomes the alias's only
    /// target, if it passed the alias's gate. A winner that has not passed the gate is not promoted: 409 saying why, the refusal in the experiment's
    /// history, and the experiment still running.
    func concludeExperiment(_ id: Int, of name: String, winner: Int, by who: String) async throws -> HubExperiment {
        await acquire()
        defer { release() }
        let attempt: Result<HubExperiment, HubError> = try await retrying("concluding experiment \(id) of \(name)") {
            try await transaction { db in
                guard var experiment = try await HubStore.experiment(db, id: id, of: name) else {
                    throw HubError.notFound("\(name) has no experiment \(id).")
                }
                guard experiment.status == .running else {
                    throw HubError.conflict("Experiment \(id) of \(name) is \(experiment.status.rawValue) already.")
                }
                guard experiment.variants.contains(where: { $0.version == winner }) else {
                    throw HubError.badRequest(
                        "Version \(winner) is not a variant of experiment \(id) (\(experiment.variants.summary)).")
                }
                let targets = [HubAliasTarget(version: winner)]
                do {
                    _ = try await HubStore.checkGate(
                        db, name: name, alias: experiment.alias, targets: targets, force: nil)
                } catch HubError.gateRefused(let text) {
                    try await HubStore.appendHistory(
                        db, id: id, action: "conclude-refused", by: who,
                        details: "version \(winner) not promoted: \(text)")
                    return .failure(HubError.gateRefused("Version \(winner) is not promoted: \(text)"))
                }
                let (moved, _) = try await HubStore.setAlias(
                    db, name: name, alias: experiment.alias, targets: targets, by: who, action: "experiment-conclude")
                try await HubStore.noteReason(db, moved, reason: "experiment \(id): version \(winner) won")
                experiment.status = .concluded
                experiment.endedAt = HubStore.now()
                experiment.endedBy = who
                experiment.winner = winner
                experiment.outcome = "version \(winner) promoted to \(experiment.alias)"
                try await HubStore.save(db, experiment)
                try await HubStore.appendHistory(
                    db, id: id, action: "conclude", by: who, details: experiment.outcome ?? "")
                return .success(experiment)
            }
        }
        return try attempt.get()
    }
}

extension HubStore {
    /// The experiment running on an alias, if one is: while it runs, the alias is its own
    /// (a move or a rollback is refused: stop or conclude it first).
    func runningExperiment(on alias: String, of name: String) async throws -> HubExperiment? {
        await acquire()
        defer { release() }
        return try await HubStore.runningExperiment(database, name: name, alias: alias)
    }

    /// Refuses to move an alias an experiment runs on (409, naming it).
    func refuseMoveDuringExperiment(_ alias: String, of name: String) async throws {
        if let running = try await runningExperiment(on: alias, of: name) {
            throw HubError.conflict(
                "Experiment \(running.id) is running on \"\(alias)\" of \(name) (\(running.variants.summary)): stop "
                    + "or conclude it first (netrunner hub experiment stop|conclude \(name) \(running.id)).")
        }
    }
}
