/// What stops an experiment by itself.
///
/// Each is checked after every batch of events, and trips when a variant is worse than the
/// baseline by more than its margin, at the experiment's confidence (an always-valid one-sided
/// test, however often it is checked). `nil`: not watched.
public struct HubExperimentGuardrails: Codable, Equatable, Sendable {
    /// The margin on the inference failure rate (0.01: one point worse is tolerated).
    public var failureRate: Double?
    /// The margin on the share of clients that crashed.
    public var crashes: Double?
    /// The margin on the inference latency's 90th percentile, in milliseconds.
    public var latencyP90Ms: Double?
    /// The margin on the goal's rate below the baseline's (a floor on the goal).
    public var goalFloor: Double?

    /// Creates guardrails.
    public init(
        failureRate: Double? = nil, crashes: Double? = nil, latencyP90Ms: Double? = nil, goalFloor: Double? = nil
    ) {
        self.failureRate = failureRate
        self.crashes = crashes
        self.latencyP90Ms = latencyP90Ms
        self.goalFloor = goalFloor
    }

    enum CodingKeys: String, CodingKey {
        case crashes
        case failureRate = "failure_rate"
        case latencyP90Ms = "latency_p90_ms"
        case goalFloor = "goal_floor"
    }

    /// Each watched guardrail by its name (`failure_rate`, `crashes`, `latency_p90_ms`,
    /// `goal_floor`) with its margin.
    public var watched: [(name: String, margin: Double)] {
        [
            ("failure_rate", failureRate), ("crashes", crashes), ("latency_p90_ms", latencyP90Ms),
            ("goal_floor", goalFloor),
        ]
        .compactMap { entry in entry.1.map { (entry.0, $0) } }
    }
}
