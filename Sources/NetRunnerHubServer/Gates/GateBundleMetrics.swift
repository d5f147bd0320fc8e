import FoundationEssentials
import NetRunnerHub

/// What a test bundle's evaluation gives a gate's rules: its task, read from the metric its
/// `test.json` names (as `netrunner evaluate` picks the task), and the metrics its report holds.
///
/// A rule naming a metric the bundle never gives (`mAP50` on a classification bundle) would fail
/// every version, the baseline included, so the hub refuses it when the gate is set. The names
/// follow `NetRunnerEvaluation`'s tasks (`TaskEvaluation.metric(named:)` and the keys each task's
/// scoring writes to a report's `metric`); the hub does not import the evaluation, it runs it.
struct GateBundleMetrics: Equatable {
    /// The bundle, as the gate names it.
    var bundle: String
    /// The task its metric scores (`classification`, `detection`, `pose`, `segmentation`,
    /// `embedding`).
    var task: String
    /// The metric its `test.json` names (`EvaluationMetricAccuracyTop5`).
    var testMetric: String
    /// The evaluation's metrics its report holds, sorted.
    var metrics: [String]

    /// Reads a bundle's `test.json`; `nil` when it cannot be read or names a metric the hub does
    /// not know (then its rules are not checked here: the evaluation says what is wrong).
    ///
    /// - Parameters:
    ///   - bundle: The bundle's name, without `.testbundle`.
    ///   - folder: The hub's `--test-bundles` folder.
    init?(bundle: String, folder: String) {
        struct Test: Decodable {
            struct Options: Decodable { var metric: String? }
            var options: Options?
        }
        guard let data = FileManager.default.contents(atPath: "\(folder)/\(bundle).testbundle/test.json"),
            data.count <= 64 << 20,
            let metric = (try? JSONDecoder().decode(Test.self, from: data))?.options?.metric,
            let (task, metrics) = Self.metrics(forTestMetric: metric)
        else { return nil }
        self.init(bundle: bundle, task: task, testMetric: metric, metrics: metrics)
    }

    /// Creates the record.
    init(bundle: String, task: String, testMetric: String, metrics: [String]) {
        self.bundle = bundle
        self.task = task
        self.testMetric = String(testMetric.prefix(64))
        self.metrics = metrics.sorted()
    }

    /// The task a test's metric scores and the metrics the report then holds; `nil` for a name
    /// no task knows.
    ///
    /// - Parameter name: The metric, as `test.json`'s `options.metric` writes it.
    /// - Returns: The task and its report's metrics.
    static func metrics(forTestMetric name: String) -> (task: String, metrics: [String])? {
        let lowered = name.lowercased()
        // Classification: top-1 and top-5 always, and the test's own key.
        if name == "EvaluationMetricAccuracyTop5" || name == "EvaluationMetricAccuracyTop1" {
            return ("classification", ["classification_accuracy", "top1", "top5"])
        }
        if lowered.hasPrefix("top"), let k = Int(lowered.dropFirst(3)), (1...10).contains(k) {
            return ("classification", Array(Set(["top1", "top5", "top\(k)_accuracy"])))
        }
        switch lowered {
        case "evaluationmetricmeanaverageprecision", "map", "mean_average_precision", "coco_map":
            return ("detection", ["mAP50", "mAP50to95"])
        case "pck@0.2", "pck", "oks", "evaluationmetricpck", "evaluationmetricoks":
            return ("pose", ["oks", "pck"])
        case "mean_iou", "miou", "pixel_accuracy", "evaluationmetricmeaniou":
            return ("segmentation", ["mean_iou", "pixel_accuracy"])
        default: break
        }
        if lowered.hasPrefix("recall@"), let k = Int(lowered.dropFirst("recall@".count)), (1...100).contains(k) {
            return ("embedding", Array(Set(["recall@1", "recall@\(k)"])))
        }
        return nil
    }

    /// Why a rule on `metric` can never pass on this bundle, or `nil` when the bundle gives it.
    ///
    /// - Parameter metric: The rule's metric.
    /// - Returns: The refusal's text, naming the rule's metric and what the bundle gives.
    func refusal(of metric: String) -> String? {
        guard !metrics.contains(metric), !HubGateRule.hubMetrics.contains(metric) else { return nil }
        return "The rule on \(metric.prefix(64)) can never pass on \(bundle): it is a \(task) test "
            + "(its metric \(testMetric)), whose evaluation gives \(metrics.joined(separator: ", ")), "
            + "and the hub's own \(HubGateRule.hubMetrics.joined(separator: ", ")). "
            + "Name one of those, or a test bundle of the version's task."
    }
}
