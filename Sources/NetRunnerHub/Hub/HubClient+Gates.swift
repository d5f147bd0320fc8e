import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NetRunnerSupport

/// Gates: what a version must pass before an alias may point to it (``HubGate``), and each
/// version's evaluations (``HubEvaluation``).
extension HubClient {
    /// A model's gates, by alias; none from a hub of a release without gates (its 404 for the
    /// route: a hub with gates answers an empty list, never 404, for a model without any).
    public func gates(model name: String) async throws(HubClientError) -> [HubGate] {
        struct List: Decodable { var gates: [HubGate] }
        do {
            return try await request("/v1/models/\(Self.escaped(name))/gates", as: List.self).gates
        } catch .refused(_, 404, _) {
            return []
        }
    }

    /// Sets an alias's gate (an admin key).
    ///
    /// The gate names test bundles of the hub's `--test-bundles` folder and rules; every
    /// published version is evaluated against it again.
    public func setGate(_ alias: String, model name: String, bundles: [String], rules: [HubGateRule])
        async throws(HubClientError) -> HubGate
    {
        struct Body: Encodable {
            var bundles: [String]
            var rules: [HubGateRule]
        }
        let data = (try? JSONCoding.encoder().encode(Body(bundles: bundles, rules: rules))) ?? Data()
        let (status, reply) = try await send(
            "PUT", "/v1/models/\(Self.escaped(name))/gates/\(Self.escaped(alias))",
            headers: [("Content-Type", "application/json")], body: .bytes(ByteBuffer(bytes: data)))
        return try decode(HubGate.self, status: status, body: reply)
    }

    /// Removes an alias's gate (an admin key) and its evaluations.
    public func removeGate(_ alias: String, model name: String) async throws(HubClientError) {
        let (status, reply) = try await send("DELETE", "/v1/models/\(Self.escaped(name))/gates/\(Self.escaped(alias))")
        _ = try decode(JSONValue.self, status: status, body: reply)
    }

    /// A version's evaluations, one per gated alias.
    public func evaluations(model name: String, version: Int) async throws(HubClientError) -> [HubEvaluation] {
        struct List: Decodable { var evaluations: [HubEvaluation] }
        return try await request("/v1/models/\(Self.escaped(name))/versions/\(version)/evaluations", as: List.self)
            .evaluations
    }
}
