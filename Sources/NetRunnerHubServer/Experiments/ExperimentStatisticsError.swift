package import NetRunnerSupport

/// Why the experiment statistics refused their input.
///
/// Counts that cannot be (more conversions than users, a negative count, a sum that is not
/// finite), settings out of range, or sketches that cannot be merged. Every number from outside (a client's report, the database's JSON)
/// is checked before any arithmetic, so none of these inputs traps.
package enum ExperimentStatisticsError: KindedFailure, Equatable {
    /// A count below zero (`field` names it).
    case negativeCount(field: String, value: Int)
    /// More conversions than users.
    case conversionsExceedUsers(conversions: Int, users: Int)
    /// A sum, sum of squares, value or setting that is NaN or infinite (`field` names it).
    case notFinite(field: String)
    /// A sum of squares below zero, or sums given for no units.
    case impossibleSums(String)
    /// A setting outside its range: `field`, the range in words, and the value.
    case outOfRange(field: String, expected: String, found: Double)
    /// Two sketches of different relative accuracy or size cannot be merged.
    case incompatibleSketches(String)
    /// A count that would overflow `Int`.
    case countOverflow

    /// Every refusal is the caller's input, not the server's fault.
    package var failureKind: FailureKind { .invalid }

    /// What was refused and what to send instead.
    package var description: String {
        switch self {
        case .negativeCount(let field, let value):
            "\(field) must be 0 or more, found \(value)"
        case .conversionsExceedUsers(let conversions, let users):
            "conversions (\(conversions)) must be at most the users (\(users))"
        case .notFinite(let field):
            "\(field) must be a finite number"
        case .impossibleSums(let text), .incompatibleSketches(let text):
            text
        case .outOfRange(let field, let expected, let found):
            "\(field) must be \(expected), found \(found)"
        case .countOverflow:
            "a count is too large (more than \(Int.max))"
        }
    }
}
