import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NetRunnerSupport

/// Experiments on an alias (``HubExperiment``) and the clients' events
/// (``HubExperimentEvent``).
extension HubClient {
    /// Starts an experiment (a publish key): the alias then serves the variants by weight, each
    /// client id the same variant every time (an A/A test: the baseline alone).
    ///
    /// - Parameter experiment: What to start: its `name`, `alias`, `variants`, `baseline`,
    ///   `goal`, `guardrails`, `alpha`, `mode` and `description` are sent; the hub sets the rest.
    /// - Returns: The experiment as the hub recorded it, with its id.
    /// - Throws: ``HubClientError``: the hub's refusal (409 while another runs on the alias).
    public func startExperiment(_ experiment: HubExperiment) async throws(HubClientError) -> HubExperiment {
        struct Body: Encodable {
            var alias: String
            var variants: [HubAliasTarget]
            var baseline: Int
            var goal: String
            var guardrails: HubExperimentGuardrails
            var alpha: Double
            var mode: HubExperimentMode
            var description: String
        }
        let body = Body(
            alias: experiment.alias, variants: experiment.variants, baseline: experiment.baseline,
            goal: experiment.goal, guardrails: experiment.guardrails, alpha: experiment.alpha, mode: experiment.mode,
            description: experiment.description)
        return try await post(
            "/v1/models/\(Self.escaped(experiment.name))/experiments", body: body, as: HubExperiment.self)
    }

    /// A model's experiments, the newest first.
    public func experiments(model name: String) async throws(HubClientError) -> [HubExperiment] {
        struct List: Decodable { var experiments: [HubExperiment] }
        return try await request("/v1/models/\(Self.escaped(name))/experiments", as: List.self).experiments
    }

    /// One experiment with its figures per arm and its history.
    public func experiment(_ id: Int, model name: String) async throws(HubClientError) -> HubExperimentDetail {
        try await request("/v1/models/\(Self.escaped(name))/experiments/\(id)", as: HubExperimentDetail.self)
    }

    /// Stops a running experiment (a publish key): the alias goes back to the baseline.
    public func stopExperiment(_ id: Int, model name: String) async throws(HubClientError) -> HubExperiment {
        let (status, reply) = try await send("POST", "/v1/models/\(Self.escaped(name))/experiments/\(id)/stop")
        return try decode(HubExperiment.self, status: status, body: reply)
    }

    /// Concludes a running experiment (a publish key): `winner` (or, without it, the variant
    /// the hub declared the winner) becomes the alias's target through its gate; a winner that
    /// has not passed is refused (409, saying why) and the experiment goes on.
    public func concludeExperiment(_ id: Int, model name: String, winner: Int? = nil) async throws(HubClientError)
        -> HubExperiment
    {
        struct Body: Encodable { var winner: Int? }
        return try await post(
            "/v1/models/\(Self.escaped(name))/experiments/\(id)/conclude", body: Body(winner: winner),
            as: HubExperiment.self)
    }

    /// Reports a batch of events (at most 500) to the experiment running on `alias` (any key;
    /// a `report` key may do only this).
    ///
    /// - Returns: What the hub counted, the duplicates and each refusal with its reason.
    /// - Throws: ``HubClientError``: the hub's refusal (409 when no experiment runs there).
    public func reportEvents(
        _ events: [HubExperimentEvent], model name: String, alias: String, experiment: Int? = nil
    ) async throws(HubClientError) -> HubEventReceipt {
        struct Body: Encodable {
            var model: String
            var alias: String
            var experiment: Int?
            var events: [HubExperimentEvent]
        }
        return try await post(
            "/v1/events", body: Body(model: name, alias: alias, experiment: experiment, events: events),
            as: HubEventReceipt.self)
    }

    /// `POST`s `body` as JSON and decodes the answer.
    func post<Value: Decodable>(_ path: String, body: some Encodable, as type: Value.Type)
        async throws(HubClientError) -> Value
    {
        let data = (try? JSONCoding.encoder().encode(body)) ?? Data()
        let (status, reply) = try await send(
            "POST", path, headers: [("Content-Type", "application/json")], body: .bytes(ByteBuffer(bytes: data)))
        return try decode(type, status: status, body: reply)
    }
}
