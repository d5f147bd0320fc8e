/// One event a client reports to an experiment (`POST /v1/events`): an outcome (the goal's, or
/// another), an inference with its latency and whether it failed, or a crash.
///
/// Each has an id the client makes (unique per client): a batch sent again counts once.
public struct HubExperimentEvent: Codable, Equatable, Sendable {
    /// What happened.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// An outcome: ``name`` with ``success`` (a binomial outcome such as `accepted`) or
        /// ``value``.
        case outcome
        /// One inference: ``latencyMs`` and ``failed``.
        case inference
        /// The client's process crashed while running the model.
        case crash
    }

    /// The event's id, made by the client (1 to 64 of letters, digits, `.`, `-`, `_`, `:`).
    public var id: String
    /// The client's id, as it resolves the alias with (`?client=`).
    public var client: String
    /// The version it ran: the one its assignment gives, else the event is refused.
    public var version: Int
    /// What happened.
    public var kind: Kind
    /// An outcome's name (`accepted`).
    public var name: String?
    /// A binomial outcome: whether it happened.
    public var success: Bool?
    /// A numeric outcome.
    public var value: Double?
    /// An inference's latency in milliseconds.
    public var latencyMs: Double?
    /// Whether the inference failed.
    public var failed: Bool?

    /// Creates an event.
    public init(
        id: String, client: String, version: Int, kind: Kind, name: String? = nil, success: Bool? = nil,
        value: Double? = nil, latencyMs: Double? = nil, failed: Bool? = nil
    ) {
        self.id = id
        self.client = client
        self.version = version
        self.kind = kind
        self.name = name
        self.success = success
        self.value = value
        self.latencyMs = latencyMs
        self.failed = failed
    }

    enum CodingKeys: String, CodingKey {
        case id, client, version, kind, name, success, value, failed
        case latencyMs = "latency_ms"
    }
}
