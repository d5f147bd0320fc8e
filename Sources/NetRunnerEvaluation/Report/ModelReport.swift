public import NetRunner

/// One model's results on a test.
public struct ModelReport: Codable, Equatable, Sendable {
    /// An image that gave no answer in any iteration.
    public struct Failure: Codable, Equatable, Sendable {
        /// The image, as the test names it.
        public var image: String
        /// Why it failed.
        public var error: String
    }

    /// A classifier's scores.
    public struct ClassificationScores: Codable, Equatable, Sendable {
        /// Top-1 accuracy over the labelled images.
        public var top1: Double
        /// Top-5 accuracy over the labelled images.
        public var top5: Double
        /// Expected class against the top-1 answer.
        public var confusion: ConfusionMatrix
        /// Precision, recall and F1 per expected class.
        public var perClass: [ClassStatistics]
        /// The unweighted means of precision, recall and F1 over the classes.
        public var macroPrecision: Double
        /// See ``macroPrecision``.
        public var macroRecall: Double
        /// See ``macroPrecision``.
        public var macroF1: Double
    }

    /// Latency per stage, in milliseconds, over every answered run.
    public struct Latency: Codable, Equatable, Sendable {
        /// Decoding the file.
        public var decode: LatencySummary?
        /// Cropping, resizing and filling the input (Net Runner's `preprocessor_latency`).
        public var preprocess: LatencySummary?
        /// The runtime, reading the outputs and post-processing (`inference_latency`).
        public var inference: LatencySummary?
        /// All three.
        public var total: LatencySummary?
        /// Inference times in bins.
        public var inferenceHistogram: Histogram?
        /// Total times in bins.
        public var totalHistogram: Histogram?

        /// The four stages' summaries, as `bulk` and an album run report theirs.
        public var stages: StageLatencies {
            StageLatencies(decode: decode, preprocess: preprocess, inference: inference, total: total)
        }
    }

    /// Counts of values in equal-width bins.
    public struct Histogram: Codable, Equatable, Sendable {
        /// The lower edge of the first bin.
        public var lower: Double
        /// The width of each bin.
        public var width: Double
        /// The count in each bin.
        public var counts: [Int]

        /// Bins `values` (not empty) into `bins` equal bins from their minimum to maximum.
        ///
        /// - Parameters:
        ///   - values: The values.
        ///   - bins: The number of bins (at least 1).
        public init?(_ values: [Double], bins: Int = 24) {
            guard let low = values.min(), let high = values.max(), bins >= 1 else { return nil }
            let width = high > low ? (high - low) / Double(bins) : 1
            var counts = [Int](repeating: 0, count: bins)
            for value in values {
                counts[min(bins - 1, max(0, Int((value - low) / width)))] += 1
            }
            self.lower = low
            self.width = width
            self.counts = counts
        }
    }

    /// One labelled image: what was expected and what the model said.
    public struct Example: Codable, Equatable, Sendable {
        /// One answer (a class, or a box with its class).
        public struct Answer: Codable, Equatable, Sendable {
            /// The class.
            public var label: String
            /// Its score.
            public var score: Float
            /// COCO's `[x, y, width, height]` in pixels, for detections.
            public var box: [Float]?

            /// An answer.
            ///
            /// - Parameters:
            ///   - label: The class.
            ///   - score: Its score.
            ///   - box: COCO's `[x, y, width, height]` in pixels, for detections.
            public init(label: String, score: Float, box: [Float]?) {
                self.label = label
                self.score = score
                self.box = box
            }
        }

        /// The image, as the test names it.
        public var image: String
        /// The accepted classes (classifiers).
        public var expected: [String]
        /// The expected boxes (detectors).
        public var expectedBoxes: [Answer]?
        /// The model's answers: its top 5 classes, or its detections.
        public var answers: [Answer]
        /// Whether the model got it right by the test's metric: an accepted class in the top K
        /// of a top-K metric (the top 5 for `EvaluationMetricAccuracyTop5`); or every expected box
        /// is found (IoU >= 0.5, same class, score >= the display threshold) and nothing else is.
        public var correct: Bool

        /// An example.
        ///
        /// - Parameters:
        ///   - image: The image, as the test names it.
        ///   - expected: The accepted classes (classifiers).
        ///   - expectedBoxes: The expected boxes (detectors).
        ///   - answers: The model's answers.
        ///   - correct: Whether the model got it right by the test's metric.
        public init(image: String, expected: [String], expectedBoxes: [Answer]?, answers: [Answer], correct: Bool) {
            self.image = image
            self.expected = expected
            self.expectedBoxes = expectedBoxes
            self.answers = answers
            self.correct = correct
        }
    }

    /// The model's id.
    public var id: String
    /// Where it was loaded from.
    public var path: String
    /// What it does.
    public var kind: ImageTask.Kind
    /// Images the test lists.
    public var images: Int
    /// Images with an answer.
    public var evaluated: Int
    /// Answered runs (images x iterations).
    public var runs: Int
    /// Images without an answer, and why.
    public var failures: [Failure]
    /// The test's metric, as its reduction names it (`classification_accuracy`, `mAP50`, ...).
    public var metric: [String: Double]
    /// A classifier's scores.
    public var classification: ClassificationScores?
    /// A detector's mean average precision.
    public var detection: MeanAveragePrecision.Result?
    /// Latency per stage.
    public var latency: Latency
    /// Every labelled image that got an answer.
    public var examples: [Example]
    /// How far its answers agree with the first model's, for every model after the first (the
    /// same model on another accelerator, or another model): `nil` for the first.
    public var agreement: Agreement? = nil

    /// Every figure of the model as one name and one number.
    ///
    /// The names are those a hub's gate rules use:
    /// the test's metric (``metric``), `top1` and `top5` (classifiers), `latency_p50_ms` and
    /// `latency_p90_ms` (the inference stage's median and 90th percentile) and `agreement`
    /// (``Agreement/top1``, for every model after the first). A reader needs no task's schema
    /// to read it (``EvaluationReport/build(test:metric:models:records:latencyNote:)`` fills it
    /// last, from the fields above).
    public var flatMetrics: [String: Double] = [:]

    /// The scores of a task's parts (a pose's keypoints, a segmenter's classes) for a task with
    /// no part of its own above (``classification``, ``detection``); `nil` for the others.
    public var breakdown: Breakdown? = nil

    /// A task's scores per part: a row per keypoint or class, its label, how many labelled
    /// instances (keypoints, pixels) it has, and its values.
    public struct Breakdown: Codable, Equatable, Sendable {
        /// One part.
        public struct Row: Codable, Equatable, Sendable {
            /// The part's name (`left_knee`, `bird`).
            public var label: String
            /// How many labelled instances it has.
            public var count: Int
            /// Its values, in the order of ``Breakdown/valueHeadings``, 0 to 1.
            public var values: [Double]

            /// A row.
            ///
            /// - Parameters:
            ///   - label: The part's name.
            ///   - count: Its labelled instances.
            ///   - values: Its values.
            public init(label: String, count: Int, values: [Double]) {
                self.label = label
                self.count = count
                self.values = values
            }
        }

        /// The table's heading (`PCK@0.2 per keypoint`).
        public var title: String
        /// The heading of the labels' column (`Keypoint`).
        public var labelHeading: String
        /// The heading of the counts' column (`Labelled`).
        public var countHeading: String
        /// The headings of the values' columns (`PCK@0.2`).
        public var valueHeadings: [String]
        /// The rows, in order.
        public var rows: [Row]

        /// A breakdown.
        ///
        /// - Parameters:
        ///   - title: The table's heading.
        ///   - labelHeading: The labels' column heading.
        ///   - countHeading: The counts' column heading.
        ///   - valueHeadings: The values' column headings.
        ///   - rows: The rows.
        public init(title: String, labelHeading: String, countHeading: String, valueHeadings: [String], rows: [Row]) {
            self.title = title
            self.labelHeading = labelHeading
            self.countHeading = countHeading
            self.valueHeadings = valueHeadings
            self.rows = rows
        }
    }

    /// How far two models' answers agree, image by image, on the images both answered.
    public struct Agreement: Codable, Equatable, Sendable {
        /// The model compared with (the report's first).
        public var baseline: String
        /// Images both answered.
        public var images: Int
        /// The share of them (0...1) with the same top-1 class (a classifier) or the same classes
        /// shown above the display threshold (a detector).
        public var top1: Double
        /// The largest difference of the top-1 class's score, over the images where the top-1
        /// agrees (classifiers; `nil` for detectors).
        public var maxTop1ScoreDifference: Double?
    }

    /// ``flatMetrics`` as the fields above give them.
    var flattenedMetrics: [String: Double] {
        var values = metric
        if let classification {
            values["top1"] = classification.top1
            values["top5"] = classification.top5
        }
        if let inference = latency.inference {
            values["latency_p50_ms"] = inference.median
            values["latency_p90_ms"] = inference.p90
        }
        if let agreement { values["agreement"] = agreement.top1 }
        return values
    }

    /// The examples the model got wrong.
    public var mistakes: [Example] { examples.filter { !$0.correct } }

    /// The examples a report shows: the mistakes, and for a task whose evaluation asks for it (a
    /// detector) also up to 8 right answers, so its boxes can be looked at.
    public var shownExamples: [Example] {
        let showsRight = TaskEvaluationRegistry.evaluation(for: kind)?.showsRightExamples ?? false
        return mistakes + (showsRight ? Array(examples.filter(\.correct).prefix(8)) : [])
    }
}
