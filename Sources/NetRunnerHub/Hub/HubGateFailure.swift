/// One rule a version's evaluation did not pass.
public struct HubGateFailure: Codable, Equatable, Sendable {
    /// The test bundle it was measured on.
    public var bundle: String
    /// The rule, as written (``HubGateRule/description``).
    public var rule: String
    /// The metric.
    public var metric: String
    /// The candidate's value, `nil` when the evaluation gave none.
    public var value: Double?
    /// The baseline's value, `nil` without a baseline.
    public var baseline: Double?
    /// Why, for people: the values and the bound missed.
    public var reason: String

    /// Creates a failure record.
    public init(bundle: String, rule: String, metric: String, value: Double?, baseline: Double?, reason: String) {
        self.bundle = bundle
        self.rule = rule
        self.metric = metric
        self.value = value
        self.baseline = baseline
        self.reason = reason
    }
}
