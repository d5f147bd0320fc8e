public import NetRunner

/// What evaluating one vision task takes, in one place: the metrics a test bundle may name for
/// it, the labels it scores, the options its runs need, how it scores a model's answers, how
/// far two models agree, and how the report shows it.
///
/// The evaluation's half of a task, beside its ``VisionTaskDefinition`` in the library (which
/// knows nothing of tests and metrics). Register it once with
/// ``TaskEvaluationRegistry/register(_:)``; ``TestMetric/named(_:)``, ``TestBundleRunner``,
/// ``EvaluationReport`` and ``HTMLReport`` then go through it. `docs/adding-a-task.md` walks
/// through one.
public protocol TaskEvaluation: Sendable {
    /// The task it scores.
    var kind: ImageTask.Kind { get }
    /// The metric names it knows, for messages (`EvaluationMetricAccuracyTop5`, `top1 ... top10`).
    var metricNames: [String] { get }
    /// Where a test bundle's labels for it are (`inference_results.classification`), for messages.
    var labelForm: String { get }
    /// What those labels are, in a message about labels of another form (`classifications`).
    var labelNoun: String { get }
    /// A metric of this task, in a message about labels of this form (`a classification metric`).
    var metricNoun: String { get }
    /// Whether the report shows some right answers beside the mistakes (boxes worth a look).
    var showsRightExamples: Bool { get }

    /// The metric a test names, if it is one of this task's.
    ///
    /// - Parameter name: The name, as the test writes it.
    /// - Returns: The metric, or `nil`.
    func metric(named name: String) -> TestMetric?

    /// How many images the test labels in this task's form.
    ///
    /// - Parameter test: The test.
    /// - Returns: The count.
    func labelledImages(in test: TestBundleDescription) -> Int

    /// Every label the test expects (checked against the model's labels before a run).
    ///
    /// - Parameter test: The test.
    /// - Returns: The labels.
    func expectedLabels(in test: TestBundleDescription) -> Set<String>

    /// Sets what the metric needs of the runs (how many answers each keeps).
    ///
    /// - Parameters:
    ///   - options: The options the models are loaded with.
    ///   - metric: The test's metric.
    func prepare(_ options: inout ImageTask.Options, for metric: TestMetric)

    /// Scores a model's answers: fills the report's `metric`, its `examples` and any part of
    /// its own (``ModelReport/classification``, ``ModelReport/detection``).
    ///
    /// - Parameters:
    ///   - report: The model's report.
    ///   - test: The test.
    ///   - metric: Its metric.
    ///   - images: The test's images, in order.
    ///   - answers: The model's answer for each image that has one.
    func score(
        _ report: inout ModelReport, test: TestBundleDescription, metric: TestMetric, images: [String],
        answers: [String: ImageAnswer])

    /// Whether two models answered an image alike.
    ///
    /// - Parameters:
    ///   - answer: A model's answer.
    ///   - baseline: The first model's answer.
    /// - Returns: Whether they agree, and the difference of their top scores where that means
    ///   something; `nil` when they cannot be compared.
    func agreement(of answer: ImageAnswer, with baseline: ImageAnswer) -> (same: Bool, scoreDifference: Double?)?

    /// A metric's value as the report writes it.
    ///
    /// - Parameter value: The value.
    /// - Returns: The text.
    func metricText(_ value: Double) -> String

    /// What counts as right, in the heading of a model's mistakes.
    ///
    /// - Parameters:
    ///   - model: The model's report.
    ///   - metric: The test's metric name.
    /// - Returns: The rule, in words.
    func rightAnswerRule(_ model: ModelReport, metric: String) -> String
}

extension TaskEvaluation {
    /// `false`: only the mistakes are shown.
    public var showsRightExamples: Bool { false }

    /// None: nothing to check against the model's labels.
    public func expectedLabels(in test: TestBundleDescription) -> Set<String> { [] }

    /// Nothing to set.
    public func prepare(_ options: inout ImageTask.Options, for metric: TestMetric) {}

    /// A percentage with one decimal.
    public func metricText(_ value: Double) -> String { HTMLReport.percent(value) }

    /// "by the test's metric".
    public func rightAnswerRule(_ model: ModelReport, metric: String) -> String { "by the test's metric" }
}
