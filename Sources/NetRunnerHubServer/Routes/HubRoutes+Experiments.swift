import FoundationEssentials
import Hummingbird
import Logging
import NetRunnerHTTP
import NetRunnerHub
import NetRunnerSupport

/// Experiments on aliases (start, list, show with the figures, stop, conclude) and the
/// clients' events (`POST /v1/events`, the `report` scope).
extension HubRoutes {
    /// The most events in one batch.
    static let eventBatchLimit = 500
    /// The most bytes of one batch's body.
    static let eventBodyLimit = 512 << 10
    /// The longest latency taken, in milliseconds (an hour).
    static let maximumLatencyMs = 3_600_000.0
    /// The largest numeric outcome taken, either side of 0.
    static let maximumOutcomeValue = 1e12

    func addExperimentRoutes(to routes: inout RouteList<BasicRequestContext>) {
        routes.post(
            "/v1/models/{name}/experiments", .keyed, .operation("startExperiment"), handler: startExperiment)
        routes.get("/v1/models/{name}/experiments", .keyed, .operation("listExperiments"), handler: listExperiments)
        routes.get("/v1/models/{name}/experiments/{id}", .keyed, .operation("getExperiment"), handler: getExperiment)
        routes.post(
            "/v1/models/{name}/experiments/{id}/stop", .keyed, .operation("stopExperiment"), handler: stopExperiment)
        routes.post(
            "/v1/models/{name}/experiments/{id}/conclude", .keyed, .operation("concludeExperiment"),
            handler: concludeExperiment)
        routes.post("/v1/events", .keyed, .operation("postEvents"), handler: postEvents)
    }

    /// The route's `{id}`: 1 to ``maximumVersion``.
    static func experimentID(_ context: BasicRequestContext) throws -> Int {
        do {
            return try CheckedNumber.integer(context.parameters.require("id"), "experiment", in: 1...maximumVersion)
        } catch let error as NumberOutOfRange {
            throw HubError.badRequest("An experiment is a whole number: \(error.description)")
        }
    }

    /// `POST /v1/models/{name}/experiments` (publish): ``experimentDraft(_:name:by:)``'s body.
    func startExperiment(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let who = try await authorize(request, .publish)
        let name = try Self.name(context)
        let draft = try await Self.experimentDraft(request, name: name, by: who)
        let started = try await store.startExperiment(draft)
        logger.notice("experiment \(started.id) on \(started.alias) of \(name) started by \(who)")
        return HTTPReply.json(started, status: .created)
    }

    /// `GET /v1/models/{name}/experiments`: the newest first.
    func listExperiments(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        return HTTPReply.json(["experiments": try await store.experiments(of: try Self.name(context))])
    }

    /// `GET /v1/models/{name}/experiments/{id}`: the experiment, its figures and its history.
    func getExperiment(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let (name, id) = (try Self.name(context), try Self.experimentID(context))
        guard let detail = try await store.experimentDetail(id, of: name) else {
            throw HubError.notFound("\(name) has no experiment \(id).")
        }
        return HTTPReply.json(detail)
    }

    /// `POST .../experiments/{id}/stop` (publish): the alias back on the baseline.
    func stopExperiment(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let who = try await authorize(request, .publish)
        let (name, id) = (try Self.name(context), try Self.experimentID(context))
        return HTTPReply.json(try await store.stopExperiment(id, of: name, by: who))
    }

    /// `POST .../experiments/{id}/conclude` (publish), `{"winner": 8}`.
    ///
    /// The winner becomes the alias's target through its gate (409 saying why when it has not passed). Without a winner: the
    /// variant the always-valid rule declared the winner (the best goal rate of those), after
    /// an A/A test the baseline; 409 when none is declared yet.
    func concludeExperiment(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let who = try await authorize(request, .publish)
        let (name, id) = (try Self.name(context), try Self.experimentID(context))
        struct Body: Decodable { var winner: Int? }
        let data = try await Self.body(of: request, upTo: 4 << 10)
        let body: Body
        if data.isEmpty {
            body = Body()
        } else {
            guard let decoded = try? JSONDecoder().decode(Body.self, from: data) else {
                throw HubError.badRequest("The body must be JSON: {\"winner\": 8}, or empty for the declared winner.")
            }
            body = decoded
        }
        let winner: Int
        if let given = body.winner {
            do {
                winner = try CheckedNumber.integer(given, "winner", in: 1...Self.maximumVersion)
            } catch {
                throw HubError.badRequest(error.description)
            }
        } else {
            guard let detail = try await store.experimentDetail(id, of: name) else {
                throw HubError.notFound("\(name) has no experiment \(id).")
            }
            if detail.experiment.mode == .aa {
                winner = detail.experiment.baseline
            } else {
                guard
                    let best = detail.analysis.arms.filter({ $0.decision == "winner" })
                        .max(by: { $0.goalRate < $1.goalRate })
                else {
                    throw HubError.conflict(
                        "Experiment \(id) has no winner yet (no variant beats the baseline at its confidence): "
                            + "name one ({\"winner\": VERSION}), or stop it.")
                }
                winner = best.version
            }
        }
        do {
            return HTTPReply.json(try await store.concludeExperiment(id, of: name, winner: winner, by: who))
        } catch HubError.gateRefused(let text) {
            await gates.countRefusal()
            throw HubError.gateRefused(text)
        }
    }

    /// `POST /v1/events` (any key, the `report` scope the least): `{"model": "m", "alias":
    /// "production", "experiment": 3, "events": [...]}` (``HubExperimentEvent``), at most
    /// ``eventBatchLimit`` events; 200 with what was counted, duplicates and refusals.
    func postEvents(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .report)
        struct Body: Decodable {
            var model: String
            var alias: String
            var experiment: Int?
            var events: [HubExperimentEvent]
        }
        let data = try await Self.body(of: request, upTo: Self.eventBodyLimit)
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: data)
        } catch {
            throw HubError.badRequest(
                "The body must be JSON: {\"model\": \"m\", \"alias\": \"production\", \"events\": [{\"id\": \"e1\", "
                    + "\"client\": \"c1\", \"version\": 2, \"kind\": \"outcome\", \"name\": \"accepted\", "
                    + "\"success\": true}]}; \(String(describing: error).prefix(300))")
        }
        let name = try Self.checkedName(body.model, what: "model name")
        let alias = try Self.checkedAlias(body.alias)
        guard (1...Self.eventBatchLimit).contains(body.events.count) else {
            throw HubError.badRequest("A batch holds 1 to \(Self.eventBatchLimit) events, not \(body.events.count).")
        }
        if let id = body.experiment, !(1...Self.maximumVersion).contains(id) {
            throw HubError.badRequest("experiment must be 1 to \(Self.maximumVersion), found \(id).")
        }
        for event in body.events { try Self.check(event) }
        // Counted behind the requests waiting for the store, as a publish is: a batch holds it
        // for tens of milliseconds, and clients sending back to back had every update check wait
        // behind their batches (p99 319 ms at 9,600 events/s; Benchmarks/hub_events_benchmark.py).
        let receipt = try await HubStore.$yieldsToRequests.withValue(true) {
            try await store.ingest(body.events, name: name, alias: alias, experimentID: body.experiment)
        }
        return HTTPReply.json(receipt)
    }

    /// Refuses an event whose fields are out of range (400 for the whole batch: a client bug).
    static func check(_ event: HubExperimentEvent) throws {
        let idCharacters = event.id.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-:".unicodeScalars.contains($0))
        }
        guard (1...64).contains(event.id.utf8.count), idCharacters else {
            throw HubError.badRequest("An event id is 1 to 64 letters, digits, '.', '-', '_' or ':'.")
        }
        let clientCharacters = event.client.unicodeScalars.allSatisfy {
            $0.isASCII && $0.value >= 0x21 && $0.value < 0x7F
        }
        guard (1...200).contains(event.client.utf8.count), clientCharacters else {
            throw HubError.badRequest(
                "Event \(event.id): a client id is 1 to 200 printable ASCII characters, no space.")
        }
        guard (1...maximumVersion).contains(event.version) else {
            throw HubError.badRequest(
                "Event \(event.id): version must be 1 to \(maximumVersion), found \(event.version).")
        }
        switch event.kind {
        case .outcome:
            guard let outcome = event.name, (1...64).contains(outcome.utf8.count),
                event.success != nil || event.value != nil
            else {
                throw HubError.badRequest(
                    "Event \(event.id): an outcome has a name (1 to 64 bytes) and a success (true or false) or a value."
                )
            }
            if let value = event.value, !(value.isFinite && abs(value) <= maximumOutcomeValue) {
                throw HubError.badRequest(
                    "Event \(event.id): value must be a finite number of at most \(maximumOutcomeValue) either side of 0."
                )
            }
        case .inference:
            if let latency = event.latencyMs, !(latency.isFinite && latency >= 0 && latency <= maximumLatencyMs) {
                throw HubError.badRequest(
                    "Event \(event.id): latency_ms must be 0 to \(Int(maximumLatencyMs)), found \(latency).")
            }
        case .crash: break
        }
    }

    /// The body of `POST /v1/models/{name}/experiments`: `{"alias": "production", "variants":
    /// [{"version": 7, "weight": 50}, {"version": 8, "weight": 50}], "baseline": 7, "goal":
    /// "accepted", "guardrails": {"failure_rate": 0.01, "latency_p90_ms": 20}, "mode": "normal",
    /// "alpha": 0.05, "description": "..."}`; the baseline defaults to the first variant, the
    /// goal to `accepted`, alpha to 0.05.
    static func experimentDraft(_ request: Request, name: String, by who: String) async throws -> HubExperiment {
        struct Body: Decodable {
            var alias: String
            var variants: [HubAliasTarget]
            var baseline: Int?
            var goal: String?
            var guardrails: HubExperimentGuardrails?
            var mode: HubExperimentMode?
            var alpha: Double?
            var description: String?
        }
        let data = try await Self.body(of: request, upTo: 64 << 10)
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: data)
        } catch {
            throw HubError.badRequest(
                "The body must be JSON: {\"alias\": \"production\", \"variants\": [{\"version\": 7, \"weight\": 50}, "
                    + "{\"version\": 8, \"weight\": 50}], \"goal\": \"accepted\"}; \(String(describing: error).prefix(300))"
            )
        }
        let alias = try checkedAlias(body.alias)
        let mode = body.mode ?? .normal
        let rule = "An experiment has 2 to 10 variants whose weights are whole percents adding up to 100"
        guard (2...10).contains(body.variants.count) else { throw HubError.badRequest(rule + ".") }
        for variant in body.variants {
            guard (1...maximumVersion).contains(variant.version), (1...100).contains(variant.weight) else {
                throw HubError.badRequest(rule + ", each version 1 to \(maximumVersion).")
            }
        }
        let sum = body.variants.map(\.weight).reduce(0, +)
        guard sum == 100 else { throw HubError.badRequest(rule + "; these add up to \(sum).") }
        let versions = body.variants.map(\.version)
        let baseline = body.baseline ?? versions[0]
        switch mode {
        case .normal:
            guard Set(versions).count == versions.count, versions.contains(baseline) else {
                throw HubError.badRequest("The variants are different versions, the baseline one of them.")
            }
        case .aa:
            guard versions.allSatisfy({ $0 == baseline }) else {
                throw HubError.badRequest("In an A/A test every variant is the baseline's version (\(baseline)).")
            }
        }
        let goal = body.goal ?? "accepted"
        guard (1...64).contains(goal.utf8.count) else {
            throw HubError.badRequest("The goal is a name of 1 to 64 bytes.")
        }
        let alpha = body.alpha ?? 0.05
        guard alpha.isFinite, alpha >= 0.001, alpha <= 0.2 else {
            throw HubError.badRequest("alpha must be 0.001 to 0.2, found \(alpha).")
        }
        let guardrails = body.guardrails ?? HubExperimentGuardrails()
        for (rail, margin) in guardrails.watched where !(margin.isFinite && margin >= 0 && margin <= 1e6) {
            throw HubError.badRequest("The guardrail \(rail)'s margin must be 0 to 1000000, found \(margin).")
        }
        let description = body.description ?? ""
        guard description.utf8.count <= 500 else { throw HubError.badRequest("A description is at most 500 bytes.") }
        return HubExperiment(
            id: 0, name: name, alias: alias, description: description, variants: body.variants, baseline: baseline,
            goal: goal, guardrails: guardrails, alpha: alpha, mode: mode, startedAt: "", startedBy: who)
    }
}
