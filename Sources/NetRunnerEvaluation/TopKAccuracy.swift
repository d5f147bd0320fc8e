public import NetRunner

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
