public import NetRunner

/// The metric a test bundle names in `options.metric`.
public enum TestMetric: Equatable, Sendable {
    /// Top-k accuracy of a classifier (Net Runner's `EvaluationMetricAccuracyTop5`, ...).
    case topK(TopKAccuracy)
    /// COCO-style mean average precision of a detector.
    case meanAveragePrecision

    /// The names ``named(_:)`` knows, for messages.
    public static let knownNames = [
        "EvaluationMetricAccuracyTop5", "EvaluationMetricAccuracyTop1", "top1 ... top10",
        "EvaluationMetricMeanAveragePrecision", "mAP",
    ]

    /// The metric with a name.
    ///
    /// - Parameter name: A Net Runner class name or a short name.
    /// - Returns: The metric, or `nil` for an unknown name.
    public static func named(_ name: String) -> TestMetric? {
        if let topK = TopKAccuracy.named(name) { return .topK(topK) }
        switch name.lowercased() {
        case "evaluationmetricmeanaverageprecision", "map", "mean_average_precision", "coco_map":
            return .meanAveragePrecision
        default: return nil
        }
    }

    /// The kind of model the metric scores.
    public var kind: ImageTask.Kind {
        switch self {
        case .topK: return .classification
        case .meanAveragePrecision: return .detection
        }
    }
}

extension TopKAccuracy: Equatable {
    /// Whether two metrics count the same answers under the same name.
    public static func == (lhs: TopKAccuracy, rhs: TopKAccuracy) -> Bool {
        lhs.k == rhs.k && lhs.key == rhs.key
    }
}
