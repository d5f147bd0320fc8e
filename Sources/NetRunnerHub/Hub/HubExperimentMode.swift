/// How an experiment's arms are made.
public enum HubExperimentMode: String, Codable, Sendable, CaseIterable {
    /// Each arm serves its own version.
    case normal
    /// Every arm serves the baseline: a test of the test, which should find no difference.
    case aa
}
