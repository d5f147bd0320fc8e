import NetRunner

/// Evaluating classifiers.
///
/// Top-k accuracy (Net Runner's `EvaluationMetricAccuracyTop5` and `Top1`, `top1` ... `top10`),
/// top-1 and top-5, per-class precision, recall and F1, and the confusion matrix.
struct ClassificationEvaluation: TaskEvaluation {
    /// The evaluation.
    init() {}

    var kind: ImageTask.Kind { .classification }
    var metricNames: [String] {
        ["EvaluationMetricAccuracyTop5", "EvaluationMetricAccuracyTop1", "top1 ... top10"]
    }
    var labelForm: String { "inference_results.classification" }
    var labelNoun: String { "classifications" }
    var metricNoun: String { "a classification metric" }

    func metric(named name: String) -> TestMetric? {
        TopKAccuracy.named(name).map { TestMetric(kind: kind, name: name, topK: $0) }
    }

    func labelledImages(in test: TestBundleDescription) -> Int { test.expectedClassifications.count }

    func expectedLabels(in test: TestBundleDescription) -> Set<String> {
        Set(test.expectedClassifications.values.flatMap { $0 })
    }

    func prepare(_ options: inout ImageTask.Options, for metric: TestMetric) {
        options.maxResults = max(5, metric.topK?.k ?? 5)
        // The plain top k, zero scores included, as the Python reference ranks them (the
        // classifier's default leaves zero scores out).
        if options.scoreThreshold == nil { options.scoreThreshold = 0 }
    }

    func agreement(of answer: ImageAnswer, with baseline: ImageAnswer) -> (same: Bool, scoreDifference: Double?)? {
        guard case .classification(let mine) = answer, case .classification(let theirs) = baseline else { return nil }
        // By label where both have one: two models' label lists may be numbered apart (Coral's
        // ImageNet models list `background` first, so every class is one index later).
        guard let top = mine.categories.first, let theirTop = theirs.categories.first,
            top.label != nil && theirTop.label != nil ? top.label == theirTop.label : top.index == theirTop.index
        else { return (false, nil) }
        return (true, Double(abs(top.score - theirTop.score)))
    }

    func rightAnswerRule(_ model: ModelReport, metric: String) -> String {
        let key = model.metric.keys.sorted().first ?? ""
        return key.isEmpty
            ? "by the test's metric" : "by the test's metric, \(HTMLReport.metricTitle(key, metric: metric))"
    }

    func score(
        _ report: inout ModelReport, test: TestBundleDescription, metric: TestMetric, images: [String],
        answers: [String: ImageAnswer]
    ) {
        let topK = metric.topK ?? TopKAccuracy(k: 5, key: "classification_accuracy")
        var metricValues: [[String: Double]] = []
        var top1: [[String: Double]] = []
        var top5: [[String: Double]] = []
        // An image's class is its set of accepted labels ("tabby / tiger cat"), the same for
        // every model, so per-class rows and the matrix line up across models.
        let className = { (accepted: [String]) in accepted.joined(separator: " / ") }
        var confusion = ConfusionMatrix(
            classes: Set(test.expectedClassifications.values.map { className($0.sorted()) }).sorted())
        for image in images {
            guard let expected = test.expectedClassifications[image]?.sorted(),
                case .classification(let result)? = answers[image]
            else { continue }
            // Any accepted class counts: the best value over them.
            func best(_ metric: TopKAccuracy) -> [String: Double] {
                expected.map { metric.evaluate(y: $0, yhat: result.categories) }
                    .reduce(into: [:]) { best, values in best.merge(values, uniquingKeysWith: max) }
            }
            let scored = best(topK)
            metricValues.append(scored)
            top1.append(best(TopKAccuracy(k: 1)))
            top5.append(best(TopKAccuracy(k: 5)))
            let first = result.categories.sortedByDescendingScore(\.score).first
            let matched = first.flatMap { category in expected.first { categoryMatches(category, expected: $0) } }
            confusion.add(
                expected: className(expected),
                answered: matched != nil ? className(expected) : first.map(EvaluationReport.name(of:)))
            report.examples.append(
                .init(
                    image: image, expected: expected, expectedBoxes: nil,
                    answers: result.categories.prefix(5).map {
                        .init(label: EvaluationReport.name(of: $0), score: $0.score, box: nil)
                    },
                    // Right or wrong by the test's own metric: with top-5, an accepted class
                    // anywhere in the top 5.
                    correct: (scored.values.max() ?? 0) >= 1))
        }
        report.metric = topK.reduce(metricValues)
        let macro = confusion.macroAverage
        report.classification = .init(
            top1: TopKAccuracy(k: 1).reduce(top1)["top1_accuracy"] ?? 0,
            top5: TopKAccuracy(k: 5).reduce(top5)["top5_accuracy"] ?? 0, confusion: confusion,
            perClass: confusion.perClass.filter { $0.support > 0 }, macroPrecision: macro.precision,
            macroRecall: macro.recall, macroF1: macro.f1)
    }
}
