/// A version's evaluation against one alias's gate: its status, its metrics beside the
/// baseline's, the rules it missed, and where its report is.
public struct HubEvaluation: Codable, Equatable, Sendable {
    /// The model's name.
    public var name: String
    /// The version evaluated.
    public var version: Int
    /// The gated alias.
    public var alias: String
    /// The gate's revision it ran against.
    public var gateRevision: Int
    /// Pending, passed or failed.
    public var status: HubGateStatus
    /// The version the alias served when it ran (the baseline), `nil` when it served none.
    public var baseline: Int?
    /// The candidate's metrics per test bundle (`imagenet-sample`: `top1`, `latency_p50_ms`...).
    public var metrics: [String: [String: Double]]
    /// The baseline's metrics per test bundle, measured in the same run.
    public var baselineMetrics: [String: [String: Double]]
    /// The rules it missed (empty when it passed).
    public var failures: [HubGateFailure]
    /// Why it could not be evaluated, or `nil`.
    public var message: String?
    /// Whether the alias moves to it once it passes (it was published with `?alias=`).
    public var promotes: Bool
    /// When it was queued, and when it finished (ISO 8601, UTC; `nil` while pending).
    public var queuedAt: String
    /// When it finished.
    public var finishedAt: String?

    /// Creates an evaluation record.
    public init(
        name: String, version: Int, alias: String, gateRevision: Int, status: HubGateStatus, baseline: Int?,
        metrics: [String: [String: Double]] = [:], baselineMetrics: [String: [String: Double]] = [:],
        failures: [HubGateFailure] = [], message: String? = nil, promotes: Bool = false, queuedAt: String,
        finishedAt: String? = nil
    ) {
        self.name = name
        self.version = version
        self.alias = alias
        self.gateRevision = gateRevision
        self.status = status
        self.baseline = baseline
        self.metrics = metrics
        self.baselineMetrics = baselineMetrics
        self.failures = failures
        self.message = message
        self.promotes = promotes
        self.queuedAt = queuedAt
        self.finishedAt = finishedAt
    }

    enum CodingKeys: String, CodingKey {
        case name, version, alias, status, baseline, metrics, failures, message, promotes
        case gateRevision = "gate_revision"
        case baselineMetrics = "baseline_metrics"
        case queuedAt = "queued_at"
        case finishedAt = "finished_at"
    }
}
