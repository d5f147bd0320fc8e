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

/// Top-k accuracy: 1 when the expected class is among the model's `k` best answers, else 0;
/// the mean over examples after ``reduce(_:)``.
///
/// Net Runner's `EvaluationMetricAccuracyTop5` is `TopKAccuracy(k: 5, key:
/// "classification_accuracy")`; ``named(_:)`` resolves that name.
public struct TopKAccuracy: EvaluationMetric {
    /// How many of the best answers count.
    public var k: Int
    /// The name the metric's value is reported under.
    public var key: String

    /// Creates a top-k accuracy metric.
    ///
    /// - Parameters:
    ///   - k: How many of the best answers count; at least 1.
    ///   - key: The result's name; `"top<k>_accuracy"` by default.
    public init(k: Int, key: String? = nil) {
        precondition(k >= 1, "top-k accuracy needs k >= 1")
        self.k = k
        self.key = key ?? "top\(k)_accuracy"
    }

    /// Scores one example.
    ///
    /// - Parameters:
    ///   - y: The expected class name.
    ///   - yhat: The model's answers, in any order; the `k` highest scores count (ties keep
    ///     the model's order).
    /// - Returns: `[key: 1]` for a hit, `[key: 0]` for a miss.
    public func evaluate(y: String, yhat: [Category]) -> [String: Double] {
        let best = yhat.sortedByDescendingScore(\.score).prefix(k)
        return [key: best.contains { categoryMatches($0, expected: y) } ? 1 : 0]
    }

    /// The metric a Net Runner test bundle names in `options.metric`, or a short name.
    ///
    /// Accepts `EvaluationMetricAccuracyTop5` and `EvaluationMetricAccuracyTop1` (reported as
    /// Net Runner does, under `classification_accuracy`), and `top1` ... `top10`.
    ///
    /// - Parameter name: The metric's name.
    /// - Returns: The metric, or `nil` for a name this type does not know.
    public static func named(_ name: String) -> TopKAccuracy? {
        switch name {
        case "EvaluationMetricAccuracyTop5": return TopKAccuracy(k: 5, key: "classification_accuracy")
        case "EvaluationMetricAccuracyTop1": return TopKAccuracy(k: 1, key: "classification_accuracy")
        default:
            let lowered = name.lowercased()
            guard lowered.hasPrefix("top"), let k = Int(lowered.dropFirst(3)), (1...10).contains(k) else {
                return nil
            }
            return TopKAccuracy(k: k)
        }
    }
}
