/// A named pointer to a version (`production`, `staging`, any name), or to several with weights
/// for a staged rollout; every change is kept in its history (``HubAliasChange``).
public struct HubAlias: Codable, Equatable, Sendable {
    /// The model's name.
    public var name: String
    /// The alias.
    public var alias: String
    /// The versions it points to, weights adding up to 100.
    public var targets: [HubAliasTarget]
    /// When it last changed (ISO 8601, UTC).
    public var updatedAt: String
    /// Who changed it last.
    public var updatedBy: String
    /// The versions it points to that have not passed its gate (``HubAliasFlag``); `nil` when it
    /// has no gate or every one passed, and from a hub of a release without gates.
    public var gateFlags: [HubAliasFlag]?
    /// In the answer to a move: whether the hub recorded it as forced past the gate (`false`
    /// when the versions had passed and the reason was not needed); `nil` elsewhere, and from a
    /// hub of an older release, which does not say.
    public var forced: Bool?
    /// In the answer to a forced move: the reason the hub kept in the history.
    public var reason: String?
    /// In the answer to a move: `true` when the alias already pointed there, so nothing
    /// changed and no history entry was written.
    public var unchanged: Bool?

    /// Creates an alias record.
    public init(
        name: String, alias: String, targets: [HubAliasTarget], updatedAt: String, updatedBy: String,
        gateFlags: [HubAliasFlag]? = nil, forced: Bool? = nil, reason: String? = nil, unchanged: Bool? = nil
    ) {
        self.name = name
        self.alias = alias
        self.targets = targets
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        self.gateFlags = gateFlags
        self.forced = forced
        self.reason = reason
        self.unchanged = unchanged
    }

    enum CodingKeys: String, CodingKey {
        case name, alias, targets, forced, reason, unchanged
        case updatedAt = "updated_at"
        case updatedBy = "updated_by"
        case gateFlags = "gate_flags"
    }

    /// The version a client gets: the only one, or for a weighted alias the one its client id
    /// falls on (a stable hash of name, alias and client id into 0..<100, so a client keeps its
    /// version while the weights stay); without a client id, the heaviest.
    ///
    /// - Parameter client: The client's id, if it gave one.
    /// - Returns: The version.
    public func version(for client: String?) -> Int {
        guard targets.count > 1 else { return targets.first?.version ?? 0 }
        guard let client, !client.isEmpty else {
            return targets.max(by: { $0.weight < $1.weight })?.version ?? targets[0].version
        }
        // FNV-1a over the bytes: stable across processes and machines (Hasher is seeded).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(name)\u{0}\(alias)\u{0}\(client)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        var bucket = Int(hash % 100)
        for target in targets {
            // Weights are 1 to 100 on a hub; clamped so no stored or hand-made value can overflow.
            let weight = Swift.min(Swift.max(target.weight, 0), 100)
            if bucket < weight { return target.version }
            bucket -= weight
        }
        return targets[targets.count - 1].version
    }
}
