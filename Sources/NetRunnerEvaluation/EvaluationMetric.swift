public import NetRunner

/// A measure of how well a model answers, computed per example and then reduced over all
/// examples: Net Runner's `EvaluationMetric` (`evaluate:yhat:` then `reduce:`).
///
/// Results are dictionaries from a metric name to a number, as in Net Runner, so that the
/// results of several metrics merge into one row of a report.
public protocol EvaluationMetric: Sendable {
    /// What the metric expects as the right answer for one example.
    associatedtype Truth
    /// What the metric expects as the model's answer for one example.
    associatedtype Prediction

    /// Scores one example.
    ///
    /// - Parameters:
    ///   - y: The expected answer.
    ///   - yhat: The model's answer.
    /// - Returns: The example's values by metric name.
    func evaluate(y: Truth, yhat: Prediction) -> [String: Double]

    /// Combines the values of all examples into the metric's result.
    ///
    /// - Parameter results: What ``evaluate(y:yhat:)`` returned for each example.
    /// - Returns: The result by metric name.
    func reduce(_ results: [[String: Double]]) -> [String: Double]
}

extension EvaluationMetric {
    /// The mean of each name's values over the examples that have it: the reduction Net Runner's
    /// accuracy metrics use.
    ///
    /// - Parameter results: The examples' values.
    /// - Returns: The mean per name; names no example has are absent.
    public func reduce(_ results: [[String: Double]]) -> [String: Double] {
        var sums: [String: (total: Double, count: Int)] = [:]
        for result in results {
            for (name, value) in result {
                sums[name, default: (0, 0)].total += value
                sums[name, default: (0, 0)].count += 1
            }
        }
        return sums.mapValues { $0.total / Double($0.count) }
    }
}

/// Whether a category answers for an expected class name.
///
/// A category matches when the expected name equals its whole label, its display name, or one
/// of the label's comma-separated synonyms (ImageNet's labels read "tabby, tabby cat"),
/// ignoring case and surrounding spaces. Labels with no name match by index when the expected
/// name is a number.
///
/// - Parameters:
///   - category: The model's answer.
///   - expected: The expected class name.
/// - Returns: Whether they name the same class.
public func categoryMatches(_ category: Category, expected: String) -> Bool {
    let wanted = normalizedClassName(expected)
    if let label = category.label {
        if normalizedClassName(label) == wanted { return true }
        if label.split(separator: ",").contains(where: { normalizedClassName($0) == wanted }) {
            return true
        }
    }
    if let displayName = category.displayName, normalizedClassName(displayName) == wanted {
        return true
    }
    if category.label == nil, let index = Int(wanted) { return index == category.index }
    return false
}

func normalizedClassName(_ name: some StringProtocol) -> String {
    String(name).trimmingWhitespace().lowercased()
}
