/// Where an experiment stands.
public enum HubExperimentStatus: String, Codable, Sendable, CaseIterable {
    /// Serving its variants and counting their events.
    case running
    /// Stopped by a person or a guardrail: the alias is back on the baseline.
    case stopped
    /// Concluded: its winner is the alias's target (or, after an A/A test, the baseline stays).
    case concluded
}
