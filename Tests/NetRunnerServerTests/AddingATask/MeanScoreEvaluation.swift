import Foundation
import NetRunner
import NetRunnerEvaluation

// The evaluation's half of the mean-score task, also written in this folder only: a test bundle
// labels each image `{"inference_results": {"mean_score": {"top": "espresso"}}}`, and the metric
// `mean_score_top` is the share of images whose best class is the one expected.

/// Evaluating the mean-score task.
struct MeanScoreEvaluation: TaskEvaluation {
    var kind: ImageTask.Kind { MeanScore.kind }
    var metricNames: [String] { ["mean_score_top"] }
    var labelForm: String { "inference_results.mean_score" }
    var labelNoun: String { "mean scores" }
    var metricNoun: String { "mean_score_top" }

    /// A label: the best class expected.
    private struct Label: Decodable {
        var top: String
    }

    private func labels(_ test: TestBundleDescription) -> [String: String] {
        test.labels(of: kind).compactMapValues { try? JSONDecoder().decode(Label.self, from: $0).top }
    }

    func metric(named name: String) -> TestMetric? {
        name == "mean_score_top" ? TestMetric(kind: kind, name: name) : nil
    }

    func labelledImages(in test: TestBundleDescription) -> Int { labels(test).count }

    func expectedLabels(in test: TestBundleDescription) -> Set<String> { Set(labels(test).values) }

    func score(
        _ report: inout ModelReport, test: TestBundleDescription, metric: TestMetric, images: [String],
        answers: [String: ImageAnswer]
    ) {
        let expected = labels(test)
        var right = 0
        for image in images {
            guard let top = expected[image], case .other(let result)? = answers[image],
                let score = result as? MeanScore
            else { continue }
            right += score.top == top ? 1 : 0
            report.examples.append(
                .init(
                    image: image, expected: [top], expectedBoxes: nil,
                    answers: [.init(label: score.top, score: score.mean, box: nil)], correct: score.top == top))
        }
        report.metric = ["mean_score_top": report.examples.isEmpty ? 0 : Double(right) / Double(report.examples.count)]
    }

    func agreement(of answer: ImageAnswer, with baseline: ImageAnswer) -> (same: Bool, scoreDifference: Double?)? {
        guard case .other(let mine as MeanScore) = answer, case .other(let theirs as MeanScore) = baseline else {
            return nil
        }
        return (mine.top == theirs.top, Double(abs(mine.mean - theirs.mean)))
    }
}
