import NetRunner
import NetRunnerImage
import NetRunnerSupport

/// One model's section: its scores, latency, confusion matrix or mAP, and examples.
extension HTMLReport {
    static func modelSection(
        _ model: ModelReport, test: EvaluationReport.Test, thumbnails: [ExactString: Thumbnail],
        into page: inout HTMLWriter
    ) {
        page.raw("<article id=\"\(anchor(test, model))\">")
        page.element("h3", "\(model.id) · \(model.kind.rawValue)")
        page.raw("<p class=\"meta\"><code>\(page.escaped(model.path))</code> · \(model.runs) timed runs</p>")
        latencySection(model, into: &page)
        if let scores = model.classification {
            classificationSection(scores, into: &page)
        }
        if let map = model.detection {
            detectionSection(map, into: &page)
        }
        if let breakdown = model.breakdown {
            breakdownSection(breakdown, kind: model.kind, into: &page)
        }
        if !model.failures.isEmpty {
            page.element("h4", "Images that failed (\(model.failures.count))")
            page.raw("<ul class=\"failures\">")
            for failure in model.failures {
                page.raw("<li><code>\(page.escaped(failure.image))</code>: \(page.escaped(failure.error))</li>")
            }
            page.raw("</ul>")
        }
        let mistakes = model.mistakes
        page.element(
            "h4",
            mistakes.isEmpty
                ? "No mistakes among the \(model.examples.count) labelled images (\(rule(of: model, metric: test.metric)))"
                : "Mistakes: \(mistakes.count) of \(model.examples.count) labelled images (\(rule(of: model, metric: test.metric)))"
        )
        let shown = model.shownExamples
        if !shown.isEmpty {
            if shown.count > mistakes.count {
                page.raw(
                    "<p class=\"meta\">\(mistakes.isEmpty ? "Some" : "The mistakes, then some") right answers, for a look at the boxes: "
                        + "<span class=\"truth\">expected</span>, <span class=\"answer\">found</span>.</p>")
            }
            page.raw("<div class=\"gallery\">")
            for example in shown {
                exampleCard(example, thumbnail: thumbnails[ExactString(example.image)], into: &page)
            }
            page.raw("</div>")
        }
        page.raw("</article>")
    }

    /// What counts as right, in the heading of the mistakes.
    private static func rule(of model: ModelReport, metric: String) -> String {
        TaskEvaluationRegistry.evaluation(for: model.kind)?.rightAnswerRule(model, metric: metric)
            ?? "by the test's metric"
    }

    private static func latencySection(_ model: ModelReport, into page: inout HTMLWriter) {
        let stages: [(String, LatencySummary?)] = [
            ("decode", model.latency.decode), ("preprocess", model.latency.preprocess),
            ("inference", model.latency.inference), ("total", model.latency.total),
        ]
        guard stages.contains(where: { $0.1 != nil }) else { return }
        page.element("h4", "Latency (ms)")
        page.raw("<div class=\"charts\">")
        page.raw("<table class=\"latency\"><thead><tr><th>Stage</th><th>mean</th><th>std</th><th>min</th>")
        page.raw("<th>median</th><th>p90</th><th>p99</th><th>max</th></tr></thead><tbody>")
        for (name, summary) in stages {
            guard let summary else { continue }
            page.raw("<tr><td>\(name)</td>")
            for value in [
                summary.mean, summary.standardDeviation, summary.min, summary.median, summary.p90, summary.p99,
                summary.max,
            ] {
                page.raw("<td>\(fixed(value, 2))</td>")
            }
            page.raw("</tr>")
        }
        let warmUp = model.latency.inference?.warmUpExcluded ?? 0
        page.raw(
            "</tbody><caption>\(model.runs) runs; \(warmUp) untimed warm-up run\(warmUp == 1 ? "" : "s") "
                + "left out</caption></table>")
        if let histogram = model.latency.inferenceHistogram {
            page.raw(histogramChart(title: "Inference", histogram))
        }
        if let histogram = model.latency.totalHistogram {
            page.raw(histogramChart(title: "Total (decode + preprocess + inference)", histogram))
        }
        page.raw("</div>")
    }

    private static func classificationSection(_ scores: ModelReport.ClassificationScores, into page: inout HTMLWriter) {
        page.element("h4", "Accuracy per class")
        page.raw(
            "<p>Top-1 \(percent(scores.top1)) · top-5 \(percent(scores.top5)) · macro precision "
                + "\(percent(scores.macroPrecision)), recall \(percent(scores.macroRecall)), F1 "
                + "\(percent(scores.macroF1))</p>")
        page.raw("<table class=\"perclass\"><thead><tr><th>Class</th><th>Images</th><th>Recall (accuracy)</th>")
        page.raw("<th>Precision</th><th>F1</th></tr></thead><tbody>")
        for stats in scores.perClass {
            page.raw(
                "<tr><td>\(page.escaped(stats.label))</td><td>\(stats.support)</td>"
                    + "<td>\(meter(stats.recall)) \(percent(stats.recall))</td><td>\(percent(stats.precision))</td>"
                    + "<td>\(percent(stats.f1))</td></tr>")
        }
        page.raw("</tbody></table>")
        confusionMatrix(scores.confusion, into: &page)
    }

    private static func confusionMatrix(_ matrix: ConfusionMatrix, into page: inout HTMLWriter) {
        guard !matrix.classes.isEmpty else { return }
        page.element("h4", "Confusion matrix (rows: expected, columns: top-1 answer)")
        let largest = max(1, matrix.counts.joined().max() ?? 1)
        page.raw("<div class=\"scroll\"><table class=\"confusion\"><thead><tr><th></th>")
        for label in matrix.classes { page.raw("<th class=\"col\"><span>\(page.escaped(label))</span></th>") }
        page.raw("<th class=\"col\"><span>(no answer)</span></th></tr></thead><tbody>")
        for (row, label) in matrix.classes.enumerated() {
            guard matrix.counts[row].reduce(0, +) + matrix.unanswered[row] > 0 else { continue }
            page.raw("<tr><th>\(page.escaped(label))</th>")
            for (column, count) in matrix.counts[row].enumerated() {
                let alpha = count == 0 ? 0 : 0.15 + 0.85 * Double(count) / Double(largest)
                let hue = row == column ? "34,139,34" : "200,40,40"
                page.raw(
                    "<td style=\"background:rgba(\(hue),\(fixed(alpha, 2)))\">\(count == 0 ? "" : String(count))</td>")
            }
            page.raw("<td>\(matrix.unanswered[row] == 0 ? "" : String(matrix.unanswered[row]))</td></tr>")
        }
        page.raw("</tbody></table></div>")
    }

    private static func detectionSection(_ map: MeanAveragePrecision.Result, into page: inout HTMLWriter) {
        page.element("h4", "Average precision per class (COCO style)")
        page.raw(
            "<p>mAP@0.5 \(fixed(map.mAP50, 3)) · mAP@0.5:0.95 \(fixed(map.mAP50to95, 3)) "
                + "(101-point interpolation, IoU 0.5 to 0.95 step 0.05, at most 100 detections per image)</p>")
        page.raw("<table class=\"perclass\"><thead><tr><th>Class</th><th>Objects</th><th>AP@0.5</th>")
        page.raw("<th>AP@0.5:0.95</th></tr></thead><tbody>")
        for label in map.groundTruthCount.keys.sorted() {
            let ap50 = map.perClassAP50[label] ?? 0
            page.raw(
                "<tr><td>\(page.escaped(label))</td><td>\(map.groundTruthCount[label] ?? 0)</td>"
                    + "<td>\(meter(ap50)) \(fixed(ap50, 3))</td><td>\(fixed(map.perClassAP50to95[label] ?? 0, 3))</td></tr>"
            )
        }
        page.raw("</tbody></table>")
    }

    /// A task's scores per part: a row per keypoint or class.
    private static func breakdownSection(
        _ breakdown: ModelReport.Breakdown, kind: ImageTask.Kind, into page: inout HTMLWriter
    ) {
        page.element("h4", breakdown.title)
        page.raw(
            "<table class=\"perclass\"><thead><tr><th>\(page.escaped(breakdown.labelHeading))</th>"
                + "<th>\(page.escaped(breakdown.countHeading))</th>")
        for heading in breakdown.valueHeadings { page.raw("<th>\(page.escaped(heading))</th>") }
        page.raw("</tr></thead><tbody>")
        let evaluation = TaskEvaluationRegistry.evaluation(for: kind)
        for row in breakdown.rows {
            page.raw("<tr><td>\(page.escaped(row.label))</td><td>\(row.count)</td>")
            for (column, value) in row.values.enumerated() {
                page.raw(
                    "<td>\(column == 0 ? meter(value) + " " : "")\(evaluation?.metricText(value) ?? fixed(value, 3))</td>"
                )
            }
            page.raw("</tr>")
        }
        page.raw("</tbody></table>")
    }

    private static func exampleCard(
        _ example: ModelReport.Example, thumbnail: Thumbnail?, into page: inout HTMLWriter
    ) {
        page.raw("<figure class=\"card\(example.correct ? "" : " wrong")\">")
        if let thumbnail {
            let width = thumbnail.size.width
            let height = thumbnail.size.height
            let scale = Double(width) / Double(max(1, thumbnail.originalSize.width))
            page.raw(
                "<svg width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\">"
                    + "<image href=\"\(thumbnail.dataURI)\" width=\"\(width)\" height=\"\(height)\"/>")
            for box in example.expectedBoxes ?? [] {
                page.raw(rect(box, scale: scale, class: "truth"))
            }
            for answer in example.answers where answer.box != nil {
                page.raw(rect(answer, scale: scale, class: "answer"))
            }
            page.raw("</svg>")
        }
        page.raw("<figcaption><code>\(page.escaped(example.image))</code><br>")
        if let boxes = example.expectedBoxes {
            page.raw(
                "<span class=\"truth\">expected \(boxes.count) object\(boxes.count == 1 ? "" : "s")</span> · "
                    + "<span class=\"count \(example.correct ? "right" : "wrong")\">found \(example.answers.count)</span>"
            )
            for answer in example.answers {
                page.raw("<br>\(page.escaped(answer.label)) \(fixed(Double(answer.score), 2))")
            }
        } else {
            page.raw("expected <b>\(page.escaped(example.expected.joined(separator: " / ")))</b><ol>")
            for answer in example.answers {
                page.raw("<li>\(page.escaped(answer.label)) <small>\(fixed(Double(answer.score), 3))</small></li>")
            }
            page.raw("</ol>")
        }
        page.raw("</figcaption></figure>")
    }

    private static func rect(_ answer: ModelReport.Example.Answer, scale: Double, class name: String) -> String {
        guard let box = answer.box, box.count == 4 else { return "" }
        let values = box.map { fixed(Double($0) * scale, 1) }
        return "<rect class=\"\(name)\" x=\"\(values[0])\" y=\"\(values[1])\" width=\"\(values[2])\" "
            + "height=\"\(values[3])\"/>"
    }
}
