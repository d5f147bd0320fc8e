/// Whether a model is checked in a child process before its first use in this one.
public enum ModelTrust: String, Equatable, Hashable, Sendable {
    /// Checked once per model (by SHA-256) in a child process: the default.
    case checked
    /// Loaded without the check: models the program ships or has checked itself.
    case trusted
}
