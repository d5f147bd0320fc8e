public import NetRunner

/// What an evaluation found, per model: the test bundle's metric, accuracy per class and the
/// confusion matrix (classifiers) or mean average precision (detectors), latency with
/// percentiles, the images that failed, and every labelled example with the model's answer.
///
/// It is built from the run's result lines (``ResultsLine``s), so a run resumed after an
/// interruption reports exactly what one uninterrupted run would.
public struct EvaluationReport: Codable, Equatable, Sendable {
    /// The test that was run.
    public struct Test: Codable, Equatable, Sendable {
        /// Its display name.
        public var name: String
        /// Its id.
        public var id: String
        /// Its version.
        public var version: String
        /// The test bundle folder.
        public var path: String
        /// The metric's name, as the test names it.
        public var metric: String
        /// Runs per image and model.
        public var iterations: Int
        /// Images listed.
        public var images: Int
    }

    /// The test.
    public var test: Test
    /// How latency was measured (the warm-up left out, the thread count).
    public var latencyNote: String
    /// One entry per model, in the order they were run.
    public var models: [ModelReport]
}

extension EvaluationReport {
    /// The score a detection needs to count as an answer shown to a user (and in
    /// ``ModelReport/Example/correct``); mAP itself uses every detection.
    public static let displayThreshold: Float = 0.5

    /// Builds the report of a test from its result lines.
    ///
    /// - Parameters:
    ///   - test: The test bundle.
    ///   - metric: Its metric.
    ///   - models: The models run, in order: id, path, kind.
    ///   - records: The result lines (records of other models, images or iterations are ignored;
    ///     for each image the first answered iteration gives the answer, every answered
    ///     iteration gives latency).
    ///   - latencyNote: How latency was measured.
    /// - Returns: The report.
    public static func build(
        test: TestBundle, metric: TestMetric, models: [(id: String, path: String, kind: ImageTask.Kind)],
        records: [ResultsLine], latencyNote: String
    ) -> EvaluationReport {
        let description = test.description
        let images = description.images.map(\.key)
        let imageSet = Set(images)
        let mine = models.map { model in
            records.filter {
                $0.model == model.id && imageSet.contains($0.image) && ($0.iteration ?? 1) <= description.iterations
            }.sorted { ($0.iteration ?? 1) < ($1.iteration ?? 1) }
        }
        var reports = zip(models, mine).map { model, records in
            modelReport(model: model, test: description, metric: metric, images: images, records: records)
        }
        if let baseline = mine.first.map(firstAnswers) {
            for index in reports.indices.dropFirst() {
                reports[index].agreement = agreement(
                    firstAnswers(mine[index]), with: baseline, baseline: reports[0].id)
            }
        }
        for index in reports.indices { reports[index].flatMetrics = reports[index].flattenedMetrics }
        return EvaluationReport(
            test: Test(
                name: description.name, id: description.id, version: description.version, path: test.path,
                metric: description.metric, iterations: description.iterations, images: images.count),
            latencyNote: latencyNote, models: reports)
    }

    private static func modelReport(
        model: (id: String, path: String, kind: ImageTask.Kind), test: TestBundleDescription, metric: TestMetric,
        images: [String], records: [ResultsLine]
    ) -> ModelReport {
        var answers: [String: ImageAnswer] = [:]
        var errors: [String: String] = [:]
        var decode: [Double] = []
        var preprocess: [Double] = []
        var inference: [Double] = []
        var total: [Double] = []
        for record in records {
            guard let answer = record.answer else {
                if errors[record.image] == nil { errors[record.image] = record.error ?? "failed" }
                continue
            }
            if answers[record.image] == nil { answers[record.image] = answer }
            decode.append(answer.decodingMilliseconds)
            preprocess.append(answer.preprocessingMilliseconds)
            inference.append(answer.inferenceMilliseconds)
            total.append(record.totalMilliseconds ?? 0)
        }
        let failures = images.compactMap { image in
            answers[image] == nil ? errors[image].map { ModelReport.Failure(image: image, error: $0) } : nil
        }
        func summary(_ values: [Double]) -> LatencySummary? {
            guard var summary = LatencySummary(milliseconds: values) else { return nil }
            summary.warmUpExcluded = 1  // the untimed run before the timed ones
            return summary
        }
        var report = ModelReport(
            id: model.id, path: model.path, kind: model.kind, images: images.count, evaluated: answers.count,
            runs: inference.count, failures: failures, metric: [:], classification: nil, detection: nil,
            latency: .init(
                decode: summary(decode), preprocess: summary(preprocess), inference: summary(inference),
                total: summary(total), inferenceHistogram: ModelReport.Histogram(inference),
                totalHistogram: ModelReport.Histogram(total)),
            examples: [])
        TaskEvaluationRegistry.evaluation(for: metric.kind)?.score(
            &report, test: test, metric: metric, images: images, answers: answers)
        return report
    }

    /// Each image's answer from its first answered iteration.
    private static func firstAnswers(_ records: [ResultsLine]) -> [String: ImageAnswer] {
        var answers: [String: ImageAnswer] = [:]
        for record in records where answers[record.image] == nil {
            if let answer = record.answer { answers[record.image] = answer }
        }
        return answers
    }

    /// How far `answers` agree with `baseline`'s on the images both answered.
    private static func agreement(
        _ answers: [String: ImageAnswer], with baseline: [String: ImageAnswer], baseline id: String
    ) -> ModelReport.Agreement {
        var both = 0
        var same = 0
        var largest: Double?
        for (image, answer) in answers {
            guard let other = baseline[image] else { continue }
            both += 1
            guard let evaluation = TaskEvaluationRegistry.evaluation(for: answer.kind),
                let agreed = evaluation.agreement(of: answer, with: other)
            else { continue }
            if agreed.same { same += 1 }
            if agreed.same, let difference = agreed.scoreDifference { largest = max(largest ?? 0, difference) }
        }
        return ModelReport.Agreement(
            baseline: id, images: both, top1: both == 0 ? 0 : Double(same) / Double(both),
            maxTop1ScoreDifference: largest)
    }

    /// A category as reports name it: its display name, else its label, else its index.
    static func name(of category: Category) -> String {
        category.displayName ?? category.label ?? String(category.index)
    }
}
