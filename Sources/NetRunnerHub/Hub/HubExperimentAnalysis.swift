/// An experiment's figures now: each arm against the baseline's.
public struct HubExperimentAnalysis: Codable, Equatable, Sendable {
    /// The arms, in the experiment's order.
    public var arms: [Arm]

    /// Creates an analysis.
    public init(arms: [Arm]) { self.arms = arms }

    /// One arm's figures.
    public struct Arm: Codable, Equatable, Sendable {
        /// The arm's index in the experiment's variants.
        public var arm: Int
        /// The version it serves.
        public var version: Int
        /// Its share of clients, in percent.
        public var weight: Int
        /// Whether it is the baseline's arm.
        public var baseline: Bool
        /// The clients that reported.
        public var clients: Int
        /// The events counted.
        public var events: Int
        /// The goal's outcomes reported.
        public var outcomes: Int
        /// The share of those that succeeded.
        public var goalRate: Double
        /// The chance that it beats the baseline on the goal (gbstats' Bayesian figure); `nil`
        /// for the baseline.
        public var chanceToBeatBaseline: Double?
        /// The expected relative change of the goal's rate (0.1: 10% above the baseline).
        public var relativeChange: Double?
        /// The 95% interval of the relative change: its lower end.
        public var relativeChangeLower: Double?
        /// Its upper end.
        public var relativeChangeUpper: Double?
        /// The inferences reported.
        public var inferences: Int
        /// The share of them that failed.
        public var failureRate: Double
        /// The share of clients that crashed.
        public var crashRate: Double
        /// The latency's median, in milliseconds (`nil` without inferences).
        public var latencyP50Ms: Double?
        /// The latency's 90th percentile, in milliseconds.
        public var latencyP90Ms: Double?
        /// The always-valid decision on the goal: `winner`, `loser` or `continue`; `nil` for
        /// the baseline.
        public var decision: String?
        /// Each watched guardrail.
        public var guardrails: [Guardrail]

        /// Creates an arm's figures.
        public init(
            arm: Int, version: Int, weight: Int, baseline: Bool, clients: Int, events: Int, outcomes: Int,
            goalRate: Double, chanceToBeatBaseline: Double? = nil, relativeChange: Double? = nil,
            relativeChangeLower: Double? = nil, relativeChangeUpper: Double? = nil, inferences: Int,
            failureRate: Double, crashRate: Double, latencyP50Ms: Double? = nil, latencyP90Ms: Double? = nil,
            decision: String? = nil, guardrails: [Guardrail] = []
        ) {
            self.arm = arm
            self.version = version
            self.weight = weight
            self.baseline = baseline
            self.clients = clients
            self.events = events
            self.outcomes = outcomes
            self.goalRate = goalRate
            self.chanceToBeatBaseline = chanceToBeatBaseline
            self.relativeChange = relativeChange
            self.relativeChangeLower = relativeChangeLower
            self.relativeChangeUpper = relativeChangeUpper
            self.inferences = inferences
            self.failureRate = failureRate
            self.crashRate = crashRate
            self.latencyP50Ms = latencyP50Ms
            self.latencyP90Ms = latencyP90Ms
            self.decision = decision
            self.guardrails = guardrails
        }

        enum CodingKeys: String, CodingKey {
            case arm, version, weight, baseline, clients, events, outcomes, inferences, decision, guardrails
            case goalRate = "goal_rate"
            case chanceToBeatBaseline = "chance_to_beat_baseline"
            case relativeChange = "relative_change"
            case relativeChangeLower = "relative_change_lower"
            case relativeChangeUpper = "relative_change_upper"
            case failureRate = "failure_rate"
            case crashRate = "crash_rate"
            case latencyP50Ms = "latency_p50_ms"
            case latencyP90Ms = "latency_p90_ms"
        }
    }

    /// A guardrail's state for one arm.
    public struct Guardrail: Codable, Equatable, Sendable {
        /// `failure_rate`, `crashes`, `latency_p90_ms` or `goal_floor`.
        public var metric: String
        /// The margin tolerated.
        public var margin: Double
        /// The arm's figure.
        public var value: Double
        /// The baseline's.
        public var baselineValue: Double
        /// Whether the arm is worse than the baseline by more than the margin, at the
        /// experiment's confidence.
        public var tripped: Bool

        /// Creates a guardrail's state.
        public init(metric: String, margin: Double, value: Double, baselineValue: Double, tripped: Bool) {
            self.metric = metric
            self.margin = margin
            self.value = value
            self.baselineValue = baselineValue
            self.tripped = tripped
        }

        enum CodingKeys: String, CodingKey {
            case metric, margin, value, tripped
            case baselineValue = "baseline_value"
        }
    }
}
