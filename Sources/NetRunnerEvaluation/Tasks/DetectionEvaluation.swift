import NetRunner

/// Evaluating object detectors: COCO-style mean average precision (`mAP50`, `mAP50to95`), per
/// class, with every detection ranked; an image is right when every expected box is found
/// (same class, IoU 0.5, score at least ``EvaluationReport/displayThreshold``) and nothing else.
struct DetectionEvaluation: TaskEvaluation {
    /// The evaluation.
    init() {}

    var kind: ImageTask.Kind { .detection }
    var metricNames: [String] { ["EvaluationMetricMeanAveragePrecision", "mAP"] }
    var labelForm: String { "inference_results.detection boxes" }
    var labelNoun: String { "detection boxes" }
    var metricNoun: String { "a detection metric such as mAP" }
    var showsRightExamples: Bool { true }

    func metric(named name: String) -> TestMetric? {
        switch name.lowercased() {
        case "evaluationmetricmeanaverageprecision", "map", "mean_average_precision", "coco_map":
            TestMetric(kind: kind, name: name)
        default: nil
        }
    }

    func labelledImages(in test: TestBundleDescription) -> Int { test.expectedDetections.count }

    func expectedLabels(in test: TestBundleDescription) -> Set<String> {
        Set(test.expectedDetections.values.flatMap { $0.map(\.label) })
    }

    func prepare(_ options: inout ImageTask.Options, for metric: TestMetric) {
        // mAP ranks every detection: keep the low-scoring ones too, up to COCO's 100.
        options.scoreThreshold = 0.05
        options.maxResults = 100
    }

    func agreement(of answer: ImageAnswer, with baseline: ImageAnswer) -> (same: Bool, scoreDifference: Double?)? {
        guard case .detection(let mine) = answer, case .detection(let theirs) = baseline else { return nil }
        let shown = { (result: DetectionResult) in
            result.detections.filter { ($0.categories.first?.score ?? 0) >= EvaluationReport.displayThreshold }
                .compactMap { $0.categories.first.map(EvaluationReport.name(of:)) }.sorted()
        }
        return (shown(mine) == shown(theirs), nil)
    }

    /// Average precision as COCO prints it (0 to 1, three decimals).
    func metricText(_ value: Double) -> String { HTMLReport.fixed(value, 3) }

    func rightAnswerRule(_ model: ModelReport, metric: String) -> String {
        "every expected box found at IoU 0.5, nothing else"
    }

    func score(
        _ report: inout ModelReport, test: TestBundleDescription, metric: TestMetric, images: [String],
        answers: [String: ImageAnswer]
    ) {
        var map = MeanAveragePrecision()
        for image in images {
            guard let truth = test.expectedDetections[image], case .detection(let result)? = answers[image] else {
                continue
            }
            let scored = result.detections.map { detection in
                MeanAveragePrecision.ScoredBox(
                    label: detection.categories.first.map(EvaluationReport.name(of:)) ?? "0",
                    box: detection.boundingBox, score: detection.categories.first?.score ?? 0)
            }
            map.add(truth: truth, detections: scored)
            let shown = scored.filter { $0.score >= EvaluationReport.displayThreshold }
            let found = truth.allSatisfy { box in
                shown.contains { $0.label == box.label && $0.box.intersectionOverUnion(with: box.box) >= 0.5 }
            }
            let noExtra = shown.allSatisfy { answer in
                truth.contains { $0.label == answer.label && $0.box.intersectionOverUnion(with: answer.box) >= 0.5 }
            }
            func coco(_ box: BoundingBox) -> [Float] { [box.minX, box.minY, box.width, box.height] }
            report.examples.append(
                .init(
                    image: image, expected: [],
                    expectedBoxes: truth.map { .init(label: $0.label, score: 1, box: coco($0.box)) },
                    answers: shown.map { .init(label: $0.label, score: $0.score, box: coco($0.box)) },
                    correct: found && noExtra))
        }
        let result = map.result()
        report.detection = result
        report.metric = ["mAP50": result.mAP50, "mAP50to95": result.mAP50to95]
    }
}
