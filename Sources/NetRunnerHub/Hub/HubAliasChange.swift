/// One entry of an alias's append-only history: who pointed it where, when, from what.
public struct HubAliasChange: Codable, Equatable, Sendable {
    /// The model's name.
    public var name: String
    /// The alias.
    public var alias: String
    /// The entry's number in this alias's history, from 1.
    public var sequence: Int
    /// `set`, `rollback`, `delete`, `force` (moved past its gate by an admin: ``reason`` says
    /// why, ``overridden`` what) or `promote` (moved by its gate once the version published to
    /// it passed), `experiment-start`, `experiment-stop` or `experiment-conclude` (an
    /// experiment's, ``HubExperiment``).
    public var action: String
    /// Where it points after the change (empty after `delete`).
    public var targets: [HubAliasTarget]
    /// Where it pointed before (empty when it was new).
    public var previous: [HubAliasTarget]
    /// When (ISO 8601, UTC).
    public var changedAt: String
    /// Who (the name of their key).
    public var changedBy: String
    /// Why a `force` was made, as its admin gave it; why an experiment moved the alias
    /// (`experiment-stop` by a guardrail: its figures).
    public var reason: String?
    /// What a `force` overrode: each version's status and failing rules.
    public var overridden: [String]?

    /// Creates a history entry.
    public init(
        name: String, alias: String, sequence: Int, action: String, targets: [HubAliasTarget],
        previous: [HubAliasTarget], changedAt: String, changedBy: String, reason: String? = nil,
        overridden: [String]? = nil
    ) {
        self.name = name
        self.alias = alias
        self.sequence = sequence
        self.action = action
        self.targets = targets
        self.previous = previous
        self.changedAt = changedAt
        self.changedBy = changedBy
        self.reason = reason
        self.overridden = overridden
    }

    enum CodingKeys: String, CodingKey {
        case name, alias, sequence, action, targets, previous, reason, overridden
        case changedAt = "changed_at"
        case changedBy = "changed_by"
    }
}
