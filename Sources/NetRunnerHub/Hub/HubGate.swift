/// What a version must pass before an alias of its model may point to it: test bundles and rules
/// (``HubGateRule``), checked against the version the alias serves now (the baseline).
///
/// Set with `netrunner hub gate set`, `PUT /v1/models/{name}/gates/{alias}` or the hub's page.
/// Every change raises ``revision``; a version's evaluation counts only for the revision it ran
/// against, so a changed gate evaluates the versions again.
public struct HubGate: Codable, Equatable, Sendable {
    /// The model's name.
    public var name: String
    /// The alias it guards (`production`).
    public var alias: String
    /// The test bundles the versions are evaluated on: names of `.testbundle` folders in the
    /// hub's `--test-bundles` folder.
    public var bundles: [String]
    /// The rules every bundle's evaluation must pass.
    public var rules: [HubGateRule]
    /// Raised by each change, from 1.
    public var revision: Int
    /// When it last changed (ISO 8601, UTC).
    public var updatedAt: String
    /// Who changed it last.
    public var updatedBy: String

    /// Creates a gate record.
    public init(
        name: String, alias: String, bundles: [String], rules: [HubGateRule], revision: Int, updatedAt: String,
        updatedBy: String
    ) {
        self.name = name
        self.alias = alias
        self.bundles = bundles
        self.rules = rules
        self.revision = revision
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
    }

    enum CodingKeys: String, CodingKey {
        case name, alias, bundles, rules, revision
        case updatedAt = "updated_at"
        case updatedBy = "updated_by"
    }
}
