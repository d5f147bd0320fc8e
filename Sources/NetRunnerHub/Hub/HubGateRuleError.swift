/// A gate rule that cannot be read (``HubGateRule/init(parsing:)``).
public struct HubGateRuleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The rule as written.
    public var rule: String
    /// What is wrong with it.
    public var reason: String

    /// Creates the error.
    public init(rule: String, reason: String) {
        self.rule = rule
        self.reason = reason
    }

    /// The message: the rule as written and what is wrong with it.
    public var description: String { "Cannot read the gate rule \"\(rule.prefix(200))\": \(reason)." }
}
