import FoundationEssentials
import NetRunnerHub
import SQLKit

/// Experiments' events: a batch counted in one transaction (deduplicated by id, checked against
/// each client's assignment and the bounds), then the guardrails checked; one that trips stops
/// the experiment and puts the alias back on the baseline, by `experiment`, with its figures.
extension HubStore {
    /// The PostgreSQL advisory lock class of an experiment's counts ("NRHE"): two nodes counting
    /// batches of one experiment take turns, so that neither overwrites the other's counts.
    static let experimentLock = 0x4E52_4845

    /// Counts a batch of events (their numbers checked by the route) in the running experiment
    /// of `alias` (409 when none runs, or when `experimentID` names another one).
    func ingest(
        _ events: [HubExperimentEvent], name: String, alias: String, experimentID: Int?
    ) async throws -> HubEventReceipt {
        await acquire()
        defer { release() }
        return try await retrying("counting events of \(alias) of \(name)") {
            try await transaction { db in
                guard let experiment = try await HubStore.runningExperiment(db, name: name, alias: alias) else {
                    throw HubError.conflict(
                        "No experiment is running on \"\(alias)\" of \(name): the events are not counted.")
                }
                if let experimentID, experimentID != experiment.id {
                    throw HubError.conflict(
                        "Experiment \(experimentID) is not the one running on \"\(alias)\" of \(name) "
                            + "(\(experiment.id) is): its events are not counted.")
                }
                if db.dialect.name == "postgresql" {
                    try await db.raw(
                        """
                        SELECT pg_advisory_xact_lock(\(unsafeRaw: String(Self.experimentLock)), \
                        \(unsafeRaw: String(experiment.id)))
                        """
                    ).run()
                }
                return try await HubStore.count(db, events, in: experiment)
            }
        }
    }

    /// ``ingest(_:name:alias:experimentID:)`` in the open transaction.
    static func count(_ db: any SQLDatabase, _ events: [HubExperimentEvent], in experiment: HubExperiment)
        async throws -> HubEventReceipt
    {
        let id = experiment.id
        guard !events.isEmpty else {
            return HubEventReceipt(experiment: id, accepted: 0, duplicates: 0, refused: [], stopped: false)
        }
        var counts = try await armCounts(db, experiment)
        let clients = Array(Set(events.map(\.client)))
        let ids = Array(Set(events.map(\.id)))
        struct Seen: Decodable {
            var client: String
            var eventId: String
        }
        var seen = Set(
            try await db.raw(
                """
                SELECT client, event_id FROM hub_experiment_seen WHERE experiment_id = \(bind: id) \
                AND event_id IN (\(binds: ids))
                """
            ).allRows(Seen.self).map { "\($0.client)\u{0}\($0.eventId)" })
        struct Known: Decodable {
            var client: String
            var crashed: Int
        }
        var known = Dictionary(
            try await db.raw(
                """
                SELECT client, crashed FROM hub_experiment_clients WHERE experiment_id = \(bind: id) \
                AND client IN (\(binds: clients))
                """
            ).allRows(Known.self).map { ($0.client, $0.crashed != 0) }, uniquingKeysWith: { first, _ in first })
        let day = String(now().prefix(10))
        try await db.raw(
            "DELETE FROM hub_experiment_client_days WHERE experiment_id = \(bind: id) AND day <> \(bind: day)"
        ).run()
        struct Today: Decodable {
            var client: String
            var events: Int
        }
        var today = Dictionary(
            try await db.raw(
                """
                SELECT client, events FROM hub_experiment_client_days WHERE experiment_id = \(bind: id) \
                AND day = \(bind: day) AND client IN (\(binds: clients))
                """
            ).allRows(Today.self).map { ($0.client, $0.events) }, uniquingKeysWith: { first, _ in first })
        let todayBefore = today
        var totalClients = counts.reduce(0) { $0 + $1.clients }
        var newClients: [(client: String, arm: Int)] = []
        var crashedNow: Set<String> = []
        var accepted = 0
        var duplicates = 0
        var refused: [HubEventReceipt.Refusal] = []
        var sequence = counts.reduce(0) { $0 + $1.events }
        var newSeen: [(client: String, id: String, sequence: Int)] = []
        for event in events {
            let key = "\(event.client)\u{0}\(event.id)"
            guard !seen.contains(key) else {
                duplicates += 1
                continue
            }
            let arm = experiment.arm(for: event.client)
            let assigned = experiment.variants[arm].version
            guard event.version == assigned else {
                refused.append(
                    .init(
                        id: event.id,
                        reason:
                            "client \(event.client.prefix(64)) is assigned version \(assigned) in experiment \(id), "
                            + "not \(event.version)"))
                continue
            }
            if known[event.client] == nil {
                guard totalClients < experimentClientLimit else {
                    refused.append(
                        .init(id: event.id, reason: "experiment \(id) counts at most \(experimentClientLimit) clients"))
                    continue
                }
                known[event.client] = false
                newClients.append((event.client, arm))
                totalClients += 1
                ExperimentArmCounts.bump(&counts[arm].clients)
            }
            guard today[event.client, default: 0] < experimentDailyLimit else {
                refused.append(
                    .init(id: event.id, reason: "a client's events are counted up to \(experimentDailyLimit) a day"))
                continue
            }
            today[event.client, default: 0] += 1
            let firstCrash = event.kind == .crash && known[event.client] == false
            if firstCrash {
                known[event.client] = true
                crashedNow.insert(event.client)
            }
            counts[arm].count(event, goal: experiment.goal, firstCrash: firstCrash)
            seen.insert(key)
            sequence += 1
            newSeen.append((event.client, event.id, sequence))
            accepted += 1
        }
        let stamp = now()
        for (client, arm) in newClients {
            try await db.raw(
                """
                INSERT INTO hub_experiment_clients (experiment_id, client, arm, crashed, first_seen) VALUES \
                (\(bind: id), \(bind: client), \(bind: arm), 0, \(bind: stamp))
                """
            ).run()
        }
        for client in crashedNow {
            try await db.raw(
                """
                UPDATE hub_experiment_clients SET crashed = 1 WHERE experiment_id = \(bind: id) \
                AND client = \(bind: client)
                """
            ).run()
        }
        for (client, count) in today where todayBefore[client] != count {
            try await db.raw(
                """
                DELETE FROM hub_experiment_client_days WHERE experiment_id = \(bind: id) AND client = \(bind: client) \
                AND day = \(bind: day)
                """
            ).run()
            try await db.raw(
                """
                INSERT INTO hub_experiment_client_days (experiment_id, client, day, events) VALUES (\(bind: id), \
                \(bind: client), \(bind: day), \(bind: count))
                """
            ).run()
        }
        // One statement per 100 ids (400 parameters: far below SQLite's and PostgreSQL's limits).
        for start in stride(from: 0, to: newSeen.count, by: 100) {
            var insert: SQLQueryString =
                "INSERT INTO hub_experiment_seen (experiment_id, client, event_id, sequence) VALUES "
            for (offset, entry) in newSeen[start..<min(start + 100, newSeen.count)].enumerated() {
                if offset > 0 { insert += ", " }
                insert += "(\(bind: id), \(bind: entry.client), \(bind: entry.id), \(bind: entry.sequence))"
            }
            try await db.raw(insert).run()
        }
        if sequence > experimentSeenLimit {
            try await db.raw(
                """
                DELETE FROM hub_experiment_seen WHERE experiment_id = \(bind: id) \
                AND sequence <= \(bind: sequence - experimentSeenLimit)
                """
            ).run()
        }
        for (arm, armCounts) in counts.enumerated() {
            try await db.raw(
                """
                UPDATE hub_experiment_arms SET counts = \(bind: encode(armCounts)) WHERE experiment_id = \(bind: id) \
                AND arm = \(bind: arm)
                """
            ).run()
        }
        var stopped = false
        if accepted > 0, let trip = ExperimentAnalyzer.analyze(experiment, counts: counts).tripped {
            _ = try await stop(
                db, experiment, by: "experiment", reason: ExperimentAnalyzer.describe(trip, experiment: experiment),
                action: "guardrail")
            stopped = true
        }
        return HubEventReceipt(
            experiment: id, accepted: accepted, duplicates: duplicates, refused: refused, stopped: stopped)
    }

    /// The experiments' gauges for `/metrics`: running ones, those guardrails stopped, and each
    /// running arm's clients and events.
    func experimentMetricsText() async throws -> String {
        await acquire()
        defer { release() }
        struct Row: Decodable {
            var id: Int
            var record: String
        }
        let all = try await database.raw("SELECT id, record FROM hub_experiments").allRows(Row.self)
            .compactMap { HubStore.decode(HubExperiment.self, $0.record) }
        let running = all.filter { $0.status == .running }
        let guarded = all.filter { $0.status == .stopped && $0.endedBy == "experiment" }.count
        var text = """
            # HELP netrunner_hub_experiments_running Experiments running.
            # TYPE netrunner_hub_experiments_running gauge
            netrunner_hub_experiments_running \(running.count)
            # HELP netrunner_hub_experiment_guardrail_stops Experiments a guardrail stopped.
            # TYPE netrunner_hub_experiment_guardrail_stops gauge
            netrunner_hub_experiment_guardrail_stops \(guarded)
            # HELP netrunner_hub_experiment_arm_clients Clients counted per arm of a running experiment.
            # TYPE netrunner_hub_experiment_arm_clients gauge
            # HELP netrunner_hub_experiment_arm_events Events counted per arm of a running experiment.
            # TYPE netrunner_hub_experiment_arm_events gauge

            """
        for experiment in running {
            for (arm, counts) in try await HubStore.armCounts(database, experiment).enumerated() {
                // Names and aliases are letters, digits, '.', '-', '_': label values as they are.
                let labels =
                    "model=\"\(experiment.name)\",alias=\"\(experiment.alias)\",experiment=\"\(experiment.id)\","
                    + "arm=\"\(arm)\",version=\"\(experiment.variants[arm].version)\""
                text += "netrunner_hub_experiment_arm_clients{\(labels)} \(counts.clients)\n"
                text += "netrunner_hub_experiment_arm_events{\(labels)} \(counts.events)\n"
            }
        }
        return text
    }
}
