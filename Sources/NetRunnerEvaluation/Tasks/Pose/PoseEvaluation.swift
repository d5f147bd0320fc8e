import FoundationEssentials
import NetRunner

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Evaluating pose estimators: PCK@0.2 of the torso diameter and COCO's object keypoint
/// similarity (OKS), both reported whichever the test names (``PoseScore`` says how each is
/// computed).
///
/// A test bundle labels an image `{"inference_results": {"pose": {"keypoints": [{"name":
/// "nose", "x": 294.5, "y": 202.6}, ...], "box": [x, y, width, height]}}}` (``PoseLabel``).
/// The report's `metric` holds `pck` (right keypoints over every labelled keypoint of every
/// image) and `oks` (the mean of the images' OKS); its breakdown PCK per keypoint. An image is
/// right when its OKS is at least 0.5, COCO's loosest AP threshold.
struct PoseEvaluation: TaskEvaluation {
    /// The evaluation.
    init() {}

    var kind: ImageTask.Kind { .pose }
    var metricNames: [String] { ["PCK@0.2", "pck", "oks", "EvaluationMetricPCK", "EvaluationMetricOKS"] }
    var labelForm: String { "inference_results.pose keypoints" }
    var labelNoun: String { "pose keypoints" }
    var metricNoun: String { "a pose metric such as PCK@0.2 or oks" }

    /// The OKS from which an image counts as right.
    static let rightOKS = 0.5

    func metric(named name: String) -> TestMetric? {
        switch name.lowercased() {
        case "pck@0.2", "pck", "oks", "evaluationmetricpck", "evaluationmetricoks": TestMetric(kind: kind, name: name)
        default: nil
        }
    }

    /// Each labelled image's label, or why it cannot be read.
    private func labels(_ test: TestBundleDescription) -> [String: Result<PoseLabel, LabelProblem>] {
        test.labels(of: kind).mapValues(PoseLabel.parse)
    }

    func labelledImages(in test: TestBundleDescription) -> Int { test.labels(of: kind).count }

    func rightAnswerRule(_ model: ModelReport, metric: String) -> String {
        "an OKS of at least 0.5 (COCO's loosest threshold)"
    }

    func score(
        _ report: inout ModelReport, test: TestBundleDescription, metric: TestMetric, images: [String],
        answers: [String: ImageAnswer]
    ) {
        let labels = labels(test)
        var right = 0
        var labelled = 0
        var perName: [String: (right: Int, count: Int)] = [:]
        var similarity: [Double] = []
        for image in images {
            guard let label = labels[image] else { continue }
            let truth: PoseLabel
            switch label {
            case .success(let value): truth = value
            case .failure(let problem):
                report.failures.append(.init(image: image, error: "its label is not scored: \(problem.text)"))
                continue
            }
            guard case .other(let result as PoseResult)? = answers[image] else { continue }
            let scored = PoseScore(result.keypoints, label: truth)
            right += scored.right
            labelled += scored.keypoints.count
            for keypoint in scored.keypoints {
                perName[keypoint.name, default: (0, 0)].count += 1
                perName[keypoint.name, default: (0, 0)].right += keypoint.right ? 1 : 0
            }
            similarity.append(scored.oks)
            report.examples.append(
                .init(
                    image: image, expected: ["\(truth.keypoints.count) keypoints"], expectedBoxes: nil,
                    answers: [
                        .init(label: "OKS", score: Float(scored.oks), box: nil),
                        .init(label: "PCK@0.2", score: Float(scored.pck), box: nil),
                    ], correct: scored.oks >= Self.rightOKS))
        }
        report.metric = [
            "pck": labelled == 0 ? 0 : Double(right) / Double(labelled),
            "oks": similarity.isEmpty ? 0 : similarity.reduce(0, +) / Double(similarity.count),
        ]
        let order = Dictionary(uniqueKeysWithValues: PoseEstimator.keypointNames.enumerated().map { ($1, $0) })
        let names = perName.keys.sorted { (order[$0] ?? order.count, $0) < (order[$1] ?? order.count, $1) }
        report.breakdown = .init(
            title: "PCK@0.2 per keypoint (within 0.2 of the torso diameter)", labelHeading: "Keypoint",
            countHeading: "Labelled", valueHeadings: ["PCK@0.2"],
            rows: names.map { name in
                let entry = perName[name] ?? (0, 0)
                return .init(
                    label: name, count: entry.count, values: [Double(entry.right) / Double(max(entry.count, 1))])
            })
    }

    /// Two poses agree when every keypoint both found (score at least 0.2) is within 2% of
    /// the image's larger side of the other's; the score difference is the poses' scores'.
    func agreement(of answer: ImageAnswer, with baseline: ImageAnswer) -> (same: Bool, scoreDifference: Double?)? {
        guard case .other(let mine as PoseResult) = answer, case .other(let theirs as PoseResult) = baseline else {
            return nil
        }
        let tolerance = 0.02 * Double(max(mine.imageWidth, mine.imageHeight))
        let shown = { (keypoint: PoseKeypoint) in keypoint.score >= 0.2 }
        let same = zip(mine.keypoints, theirs.keypoints).allSatisfy { a, b in
            guard a.name == b.name else { return false }
            guard shown(a) && shown(b) else { return shown(a) == shown(b) }
            return hypot(Double(a.x - b.x), Double(a.y - b.y)) <= tolerance
        }
        return (same && mine.keypoints.count == theirs.keypoints.count, Double(abs(mine.score - theirs.score)))
    }
}
