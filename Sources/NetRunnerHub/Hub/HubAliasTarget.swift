/// One version an alias points to, with its share of clients.
///
/// A staged rollout is `production: 7 90%, 8 10%`. An alias's weights add up to 100.
public struct HubAliasTarget: Codable, Equatable, Hashable, Sendable {
    /// The version.
    public var version: Int
    /// Its share of clients, in percent (1 to 100).
    public var weight: Int

    /// Creates a target.
    public init(version: Int, weight: Int = 100) {
        self.version = version
        self.weight = weight
    }
}

extension [HubAliasTarget] {
    /// `7` or `7 90%, 8 10%`, for people.
    public var summary: String {
        count == 1 ? "\(self[0].version)" : map { "\($0.version) \($0.weight)%" }.joined(separator: ", ")
    }
}
