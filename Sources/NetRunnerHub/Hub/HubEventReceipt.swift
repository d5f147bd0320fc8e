/// What the hub made of a batch of events.
public struct HubEventReceipt: Codable, Equatable, Sendable {
    /// The experiment they were counted in.
    public var experiment: Int
    /// The events counted.
    public var accepted: Int
    /// The events already counted (an id seen before): not counted again.
    public var duplicates: Int
    /// The events refused, each with why (a version the client is not assigned, a bound).
    public var refused: [Refusal]
    /// Whether this batch tripped a guardrail, which stopped the experiment.
    public var stopped: Bool

    /// An event the hub did not count.
    public struct Refusal: Codable, Equatable, Sendable {
        /// The event's id.
        public var id: String
        /// Why.
        public var reason: String

        /// Creates a refusal.
        public init(id: String, reason: String) {
            self.id = id
            self.reason = reason
        }
    }

    /// Creates a receipt.
    public init(experiment: Int, accepted: Int, duplicates: Int, refused: [Refusal], stopped: Bool) {
        self.experiment = experiment
        self.accepted = accepted
        self.duplicates = duplicates
        self.refused = refused
        self.stopped = stopped
    }
}
