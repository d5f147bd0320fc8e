/// Where a version stands with a gate.
public enum HubGateStatus: String, Codable, Equatable, Sendable {
    /// Waiting for its evaluation (queued, running, or stale after the gate changed).
    case pending
    /// Every rule held on every test bundle.
    case passed
    /// A rule did not hold (``HubEvaluation/failures`` says which), or the evaluation could not
    /// run (``HubEvaluation/message`` says why).
    case failed
}
