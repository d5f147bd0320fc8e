import Foundation
import Testing

@testable import NetRunner
@testable import NetRunnerEvaluation

// Expected figures were recorded once from independent implementations and are written here
// as constants: NumPy 2.4.6 (`mean`, `std`, `percentile`) and scikit-learn 1.5.2
// (`top_k_accuracy_score`, `confusion_matrix`, `precision_recall_fscore_support`,
// `accuracy_score`). The inputs are the ones below.

@Suite("Latency summaries")
struct LatencySummaryTests {
    @Test("Mean, standard deviation and percentiles equal NumPy's, warm-up excluded")
    func numpy() throws {
        let runs = [12.0, 3.5, 4.25, 4.0, 5.5, 4.75, 30.0, 4.1, 3.9, 4.4, 6.0]
        let summary = try #require(LatencySummary(milliseconds: runs, warmUp: 1))
        #expect(summary.count == 10)
        #expect(summary.warmUpExcluded == 1)
        #expect(abs(summary.totalMilliseconds - 70.4) < 1e-9)
        #expect(abs(summary.mean - 7.040000000000001) < 1e-9)
        #expect(abs(summary.standardDeviation - 7.686930466707762) < 1e-9)
        #expect(summary.min == 3.5)
        #expect(abs(summary.median - 4.325) < 1e-9)
        #expect(abs(summary.p90 - 8.399999999999991) < 1e-9)
        #expect(abs(summary.p99 - 27.840000000000003) < 1e-9)
        #expect(summary.max == 30)
    }

    @Test("Durations, one run, too few runs for the warm-up, and bad samples")
    func edges() throws {
        let fromDurations = try #require(LatencySummary([.milliseconds(2), .microseconds(4500)]))
        #expect(fromDurations.mean == 3.25)
        let one = try #require(LatencySummary(milliseconds: [7], warmUp: 3))
        #expect(one.warmUpExcluded == 0 && one.median == 7 && one.p99 == 7)
        #expect(LatencySummary(milliseconds: []) == nil)
        #expect(LatencySummary(milliseconds: [1, .nan]) == nil)
        #expect(LatencySummary(milliseconds: [1, -2]) == nil)
        let data = try JSONEncoder().encode(one)
        #expect(try JSONDecoder().decode(LatencySummary.self, from: data) == one)
    }
}

@Suite("Latency samples in bounded memory")
struct LatencySamplesTests {
    @Test("Added one at a time: NumPy's figures again, warm-up excluded, bad samples counted apart")
    func numpy() throws {
        var samples = LatencySamples(warmUp: 1)
        for run in [12.0, 3.5, 4.25, .nan, 4.0, 5.5, 4.75, 30.0, -1, 4.1, 3.9, 4.4, 6.0] { samples.add(run) }
        #expect(samples.count == 11 && samples.rejected == 2)
        let summary = try #require(samples.summary)
        #expect(summary.count == 10 && summary.warmUpExcluded == 1)
        #expect(abs(summary.totalMilliseconds - 70.4) < 1e-9)
        #expect(abs(summary.mean - 7.040000000000001) < 1e-9)
        #expect(abs(summary.standardDeviation - 7.686930466707762) < 1e-9)
        #expect(summary.min == 3.5 && summary.max == 30)
        #expect(abs(summary.median - 4.325) < 1e-9)
        #expect(abs(summary.p90 - 8.399999999999991) < 1e-9)
        #expect(abs(summary.p99 - 27.840000000000003) < 1e-9)
    }

    @Test("No more samples than the warm-up: none left out; none at all: no summary")
    func edges() throws {
        var samples = LatencySamples(warmUp: 3)
        #expect(samples.summary == nil)
        samples.add(7)
        samples.add(9)
        let two = try #require(samples.summary)
        #expect(two.warmUpExcluded == 0 && two.count == 2 && two.median == 8)
    }

    @Test("A million samples in 100,000 kept: exact moments, percentiles within half a percentile point")
    func bounded() throws {
        // A skewed distribution in a scrambled order: 1,000,000 latencies, each of 0.001...1000
        // ms once, so every exact percentile is known.
        let n = 1_000_000
        var samples = LatencySamples()
        var sum = 0.0
        for i in 0..<n {
            let value = Double((i &* 7919) % n + 1) / 1000
            sum += value
            samples.add(value)
        }
        let summary = try #require(samples.summary)
        #expect(summary.count == n && summary.min == 0.001 && summary.max == 1000)
        #expect(abs(summary.totalMilliseconds - sum) < 1e-6 * sum)
        #expect(abs(summary.mean - 500.0005) < 1e-6)
        // The population standard deviation of 1...n over 1000: sqrt((n^2 - 1) / 12) / 1000.
        #expect(abs(summary.standardDeviation - (Double(n * n - 1) / 12).squareRoot() / 1000) < 1e-6)
        // A uniform sample of 100,000: a rank error of sqrt(p (1 - p) / 100,000), 0.16 points at
        // the median (1.6 ms here); half a point is over three of those.
        for (estimate, exact) in [(summary.median, 500.0), (summary.p90, 900.0), (summary.p99, 990.0)] {
            #expect(abs(estimate - exact) < 5, "\(estimate) against \(exact)")
        }
        // The same samples, the same summary: the reservoir's generator has a fixed seed.
        var again = LatencySamples()
        for i in 0..<n { again.add(Double((i &* 7919) % n + 1) / 1000) }
        #expect(again.summary == summary)
    }
}

@Suite("Evaluation metrics")
struct EvaluationMetricTests {
    /// One row of scores over six classes named c0...c5.
    func categories(_ scores: [Float]) -> [Category] {
        scores.enumerated().map { Category(index: $0.offset, score: $0.element, label: "c\($0.offset)") }
    }

    @Test("Top-k accuracy equals scikit-learn's top_k_accuracy_score")
    func topK() {
        let rows: [[Float]] = [
            [0.1, 0.5, 0.2, 0.15, 0.05, 0.0],
            [0.3, 0.05, 0.25, 0.2, 0.1, 0.08],
            [0.04, 0.06, 0.1, 0.2, 0.3, 0.29],
            [0.6, 0.1, 0.1, 0.1, 0.05, 0.05],
        ]
        let truth = ["c2", "c1", "c0", "c0"]
        for (k, expected) in [(1, 0.25), (2, 0.5), (3, 0.5), (5, 0.5)] {
            let metric = TopKAccuracy(k: k)
            // The model's order must not matter: shuffle each row's categories.
            let results = zip(truth, rows).map { metric.evaluate(y: $0, yhat: categories($1).reversed()) }
            #expect(metric.reduce(results) == ["top\(k)_accuracy": expected], "k = \(k)")
        }
    }

    @Test("Net Runner's metric names, label synonyms, and ties")
    func names() throws {
        let top5 = try #require(TopKAccuracy.named("EvaluationMetricAccuracyTop5"))
        #expect(top5.k == 5 && top5.key == "classification_accuracy")
        #expect(TopKAccuracy.named("top1")?.key == "top1_accuracy")
        #expect(TopKAccuracy.named("Top3")?.k == 3)
        #expect(TopKAccuracy.named("top0") == nil)
        #expect(TopKAccuracy.named("EvaluationMetricMeanSquaredError") == nil)

        let tabby = Category(index: 282, score: 0.9, label: "tabby, tabby cat", displayName: "tabby")
        #expect(categoryMatches(tabby, expected: "tabby cat"))
        #expect(categoryMatches(tabby, expected: " Tabby "))
        #expect(categoryMatches(tabby, expected: "tabby, tabby cat"))
        #expect(!categoryMatches(tabby, expected: "tiger cat"))
        #expect(!categoryMatches(tabby, expected: "282"))
        #expect(categoryMatches(Category(index: 282, score: 1), expected: "282"))

        // Equal scores keep the model's order.
        let tied = [Category(index: 0, score: 0.5, label: "a"), Category(index: 1, score: 0.5, label: "b")]
        #expect(TopKAccuracy(k: 1).evaluate(y: "a", yhat: tied) == ["top1_accuracy": 1])
        #expect(TopKAccuracy(k: 1).evaluate(y: "b", yhat: tied) == ["top1_accuracy": 0])
        #expect(TopKAccuracy(k: 1).evaluate(y: "a", yhat: []) == ["top1_accuracy": 0])
        #expect(TopKAccuracy(k: 1).reduce([]) == [:])
    }

    @Test("Confusion matrix, precision, recall and F1 equal scikit-learn's")
    func confusion() throws {
        let truth = ["cat", "dog", "cat", "bird", "dog", "dog", "cat", "bird", "fox"]
        let answers: [String?] = ["cat", "cat", "cat", "bird", "dog", "bird", nil, "dog", "cat"]
        var matrix = ConfusionMatrix()
        for (expected, answered) in zip(truth, answers) { matrix.add(expected: expected, answered: answered) }

        #expect(matrix.classes == ["cat", "dog", "bird", "fox"])
        // scikit-learn's matrix has a fifth column for "none"; ours keeps it as `unanswered`.
        #expect(matrix.counts == [[2, 0, 0, 0], [1, 1, 1, 0], [0, 1, 1, 0], [1, 0, 0, 0]])
        #expect(matrix.unanswered == [1, 0, 0, 0])
        #expect(matrix.total == 9)
        #expect(abs(matrix.accuracy - 0.4444444444444444) < 1e-12)

        let stats = matrix.perClass
        let precision = [0.5, 0.5, 0.5, 0.0]
        let recall = [0.6666666666666666, 0.3333333333333333, 0.5, 0.0]
        let f1 = [0.5714285714285714, 0.4, 0.5, 0.0]
        for (i, row) in stats.enumerated() {
            #expect(abs(row.precision - precision[i]) < 1e-12, "\(row.label)")
            #expect(abs(row.recall - recall[i]) < 1e-12, "\(row.label)")
            #expect(abs(row.f1 - f1[i]) < 1e-12, "\(row.label)")
        }
        #expect(stats.map(\.support) == [3, 3, 2, 1])
        let macro = matrix.macroAverage
        #expect(abs(macro.precision - 0.375) < 1e-12)
        #expect(abs(macro.recall - 0.375) < 1e-12)
        #expect(abs(macro.f1 - 0.3678571428571429) < 1e-12)
    }

    @Test("A confusion matrix round-trips through JSON and a malformed one is refused")
    func codable() throws {
        var matrix = ConfusionMatrix(classes: ["b", "a"])
        matrix.add(expected: "a", answered: "b")
        matrix.add(expected: "c", answered: nil)
        let data = try JSONEncoder().encode(matrix)
        let decoded = try JSONDecoder().decode(ConfusionMatrix.self, from: data)
        #expect(decoded == matrix)
        var more = decoded
        more.add(expected: "a", answered: "a")
        #expect(more.counts[1][1] == 1 && more.classes == ["b", "a", "c"])

        for bad in [
            #"{"classes":["a","b"],"counts":[[1,0]],"unanswered":[0,0]}"#,
            #"{"classes":["a","a"],"counts":[[1,0],[0,1]],"unanswered":[0,0]}"#,
            #"{"classes":["a"],"counts":[[-1]],"unanswered":[0]}"#,
            #"{"classes":["a"],"counts":[[1]],"unanswered":[]}"#,
        ] {
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(ConfusionMatrix.self, from: Data(bad.utf8))
            }
        }
        #expect(ConfusionMatrix().accuracy == 0)
        #expect(ConfusionMatrix().macroAverage.f1 == 0)
    }
}
