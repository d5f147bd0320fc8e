public import NetRunner

/// The metric a test bundle names in `options.metric`: which task it scores, under which name,
/// with the top-k of a top-k accuracy.
///
/// The names are resolved by the registered ``TaskEvaluation``s (``TaskEvaluationRegistry``).
public struct TestMetric: Equatable, Sendable {
    /// The task it scores.
    public var kind: ImageTask.Kind
    /// Its name, as the test writes it.
    public var name: String
    /// For a top-k accuracy, its `k` and the key its value is reported under; else `nil`.
    public var topK: TopKAccuracy?

    /// A metric.
    ///
    /// - Parameters:
    ///   - kind: The task it scores.
    ///   - name: Its name, as the test writes it.
    ///   - topK: For a top-k accuracy, its `k` and key.
    public init(kind: ImageTask.Kind, name: String, topK: TopKAccuracy? = nil) {
        self.kind = kind
        self.name = name
        self.topK = topK
    }

    /// The names the registered tasks know, for messages.
    public static var knownNames: [String] { TaskEvaluationRegistry.all.flatMap(\.metricNames) }

    /// The metric with a name.
    ///
    /// - Parameter name: A Net Runner class name or a short name.
    /// - Returns: The metric, or `nil` for a name no registered task knows.
    public static func named(_ name: String) -> TestMetric? {
        for evaluation in TaskEvaluationRegistry.all {
            if let metric = evaluation.metric(named: name) { return metric }
        }
        return nil
    }
}

extension TopKAccuracy: Equatable {
    /// Whether two metrics count the same answers under the same name.
    public static func == (lhs: TopKAccuracy, rhs: TopKAccuracy) -> Bool {
        lhs.k == rhs.k && lhs.key == rhs.key
    }
}
