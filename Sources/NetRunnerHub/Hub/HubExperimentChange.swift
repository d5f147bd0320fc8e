/// One entry of an experiment's history: started, stopped, concluded, a conclusion its gate
/// refused, or a guardrail's stop, with its figures.
public struct HubExperimentChange: Codable, Equatable, Sendable {
    /// The entry's number, from 1.
    public var sequence: Int
    /// `start`, `stop`, `conclude`, `conclude-refused` or `guardrail`.
    public var action: String
    /// Who (the name of their key; `experiment` for what it did by itself).
    public var by: String
    /// When (ISO 8601, UTC).
    public var at: String
    /// What happened, with the figures.
    public var details: String

    /// Creates a history entry.
    public init(sequence: Int, action: String, by: String, at: String, details: String) {
        self.sequence = sequence
        self.action = action
        self.by = by
        self.at = at
        self.details = details
    }
}
