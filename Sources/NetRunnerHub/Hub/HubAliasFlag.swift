/// A version a gated alias points to that has not passed the alias's gate: what `hub show` and
/// the alias's JSON flag.
///
/// A gated alias moves only to versions that passed, so a flag means it got there another way: a
/// move an admin forced, or one made by a node of an older release that knew no gates (a
/// downgrade, or an old node left running in a rolling upgrade on a shared database). The hub
/// queues an evaluation of every version that has none, so an `unevaluated` flag turns into
/// `pending`, then clears or becomes `failed`.
public struct HubAliasFlag: Codable, Equatable, Sendable {
    /// The version.
    public var version: Int
    /// `unevaluated` (no evaluation against the gate as it is now), `pending` or `failed`.
    public var status: String

    /// Creates a flag.
    public init(version: Int, status: String) {
        self.version = version
        self.status = status
    }

    /// The flag in words: `version 3 failed its gate`.
    public var summary: String {
        switch status {
        case "failed": "version \(version) failed its gate"
        case "pending": "version \(version)'s evaluation is pending"
        default: "version \(version) has not been evaluated against its gate"
        }
    }
}
