/// What a hub API key may do; each scope includes the ones below it.
public enum HubScope: String, Codable, CaseIterable, Comparable, Sendable {
    /// Only report experiments' events (`POST /v1/events`): a key to put in a client that
    /// should read nothing.
    case report
    /// List, resolve and download models.
    case read
    /// Publish versions and move aliases.
    case publish
    /// Delete versions and manage keys.
    case admin

    /// Scopes compare by what they allow.
    public static func < (lhs: HubScope, rhs: HubScope) -> Bool {
        lhs.rank < rhs.rank
    }

    private var rank: Int {
        switch self {
        case .report: -1
        case .read: 0
        case .publish: 1
        case .admin: 2
        }
    }
}
