/// An experiment on an alias: two or more variants served to clients by weight (`production`
/// serving 7 and 8 at 50:50), compared on a goal metric, watched by guardrails, until it is
/// stopped (the alias back on the baseline) or concluded (the winner the alias's target,
/// through its gate).
///
/// Each client id lands on one variant, the same every time: the alias's staged-rollout hash
/// (``HubAlias/version(for:)``) over the variants' weights. In A/A mode every variant serves the
/// baseline, and the hash only splits the clients into arms, to check that the figures find
/// no difference where there is none.
public struct HubExperiment: Codable, Equatable, Sendable {
    /// The hub's number for it, from 1, never reused.
    public var id: Int
    /// The model's name.
    public var name: String
    /// The alias it runs on.
    public var alias: String
    /// What it tests, in a person's words (may be empty).
    public var description: String
    /// The arms: a version each, with its share of clients; the baseline is one of them.
    public var variants: [HubAliasTarget]
    /// The version the others are compared with, and the alias's target when it stops.
    public var baseline: Int
    /// The outcome whose rate is the goal (`accepted`): a binomial outcome clients report.
    public var goal: String
    /// What stops it by itself when a variant is worse than the baseline.
    public var guardrails: HubExperimentGuardrails
    /// The chance of a false decision, over every look (0.05).
    public var alpha: Double
    /// `normal`, or `aa` (every arm the baseline).
    public var mode: HubExperimentMode
    /// Running, stopped or concluded.
    public var status: HubExperimentStatus
    /// When it started (ISO 8601, UTC).
    public var startedAt: String
    /// Who started it (the name of their key).
    public var startedBy: String
    /// When it stopped or was concluded.
    public var endedAt: String?
    /// Who stopped or concluded it (`experiment` when a guardrail stopped it).
    public var endedBy: String?
    /// Why it ended: the guardrail's figures, or the winner promoted.
    public var outcome: String?
    /// The version promoted when it was concluded (none after an A/A test).
    public var winner: Int?

    /// Creates an experiment record.
    public init(
        id: Int, name: String, alias: String, description: String = "", variants: [HubAliasTarget], baseline: Int,
        goal: String, guardrails: HubExperimentGuardrails = HubExperimentGuardrails(), alpha: Double = 0.05,
        mode: HubExperimentMode = .normal, status: HubExperimentStatus = .running, startedAt: String,
        startedBy: String, endedAt: String? = nil, endedBy: String? = nil, outcome: String? = nil, winner: Int? = nil
    ) {
        self.id = id
        self.name = name
        self.alias = alias
        self.description = description
        self.variants = variants
        self.baseline = baseline
        self.goal = goal
        self.guardrails = guardrails
        self.alpha = alpha
        self.mode = mode
        self.status = status
        self.startedAt = startedAt
        self.startedBy = startedBy
        self.endedAt = endedAt
        self.endedBy = endedBy
        self.outcome = outcome
        self.winner = winner
    }

    enum CodingKeys: String, CodingKey {
        case id, name, alias, description, variants, baseline, goal, guardrails, alpha, mode, status, outcome, winner
        case startedAt = "started_at"
        case startedBy = "started_by"
        case endedAt = "ended_at"
        case endedBy = "ended_by"
    }

    /// The arm a client falls in (an index of ``variants``): the alias's rollout hash over the
    /// variants' weights, so that in normal mode the arm serves what resolving the alias gives
    /// the client.
    ///
    /// - Parameter client: The client's id (not empty).
    /// - Returns: The arm.
    public func arm(for client: String) -> Int {
        // Arms numbered from 1 as versions, whatever the versions are (A/A repeats one).
        let arms = variants.enumerated().map { HubAliasTarget(version: $0.offset + 1, weight: $0.element.weight) }
        let hashed = HubAlias(name: name, alias: alias, targets: arms, updatedAt: "", updatedBy: "")
        return max(0, min(variants.count - 1, hashed.version(for: client) - 1))
    }

    /// The index of the baseline's arm (the first that serves it).
    public var baselineArm: Int { variants.firstIndex { $0.version == baseline } ?? 0 }

    /// What the alias points to while it runs: the variants (normal), or the baseline alone (A/A).
    public var aliasTargets: [HubAliasTarget] {
        mode == .aa ? [HubAliasTarget(version: baseline)] : variants
    }
}
