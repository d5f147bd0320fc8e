/// A model on a hub: its versions and aliases (`GET /v1/models/{name}`); in a list
/// (`GET /v1/models`) without the versions.
public struct HubModel: Codable, Equatable, Sendable {
    /// Its name.
    public var name: String
    /// The description of the version ``descriptionVersion`` names: the one its `production`
    /// alias serves (a staged rollout's largest share), else the newest.
    public var description: String
    /// The version whose description ``description`` is; `nil` from a hub of an older release
    /// (which gave the newest version's).
    public var descriptionVersion: Int?
    /// The newest version published (and not deleted), if any.
    public var latestVersion: Int?
    /// The versions, oldest first (only in `GET /v1/models/{name}`).
    public var versions: [HubVersion]?
    /// The aliases.
    public var aliases: [HubAlias]
    /// When it was first published.
    public var createdAt: String

    /// Creates a model record.
    public init(
        name: String, description: String, latestVersion: Int?, versions: [HubVersion]?, aliases: [HubAlias],
        createdAt: String, descriptionVersion: Int? = nil
    ) {
        self.name = name
        self.description = description
        self.descriptionVersion = descriptionVersion
        self.latestVersion = latestVersion
        self.versions = versions
        self.aliases = aliases
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case name, description, versions, aliases
        case latestVersion = "latest_version"
        case descriptionVersion = "description_version"
        case createdAt = "created_at"
    }
}
