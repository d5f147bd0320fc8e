public import NetRunner
public import NetRunnerImage
import NetRunnerSupport

/// Renders evaluation reports as one self-contained HTML page: no script, no network, every
/// chart inline SVG and every thumbnail a `data:` URI, so the file can be mailed or archived
/// and opens anywhere.
public enum HTMLReport {
    /// The page for one or more test reports.
    ///
    /// - Parameters:
    ///   - reports: The reports (one per test bundle).
    ///   - thumbnails: Thumbnails of the images shown among the mistakes, by the test's image
    ///     name; images without one are listed without a picture.
    ///   - title: The page title.
    /// - Returns: The HTML.
    public static func render(
        _ reports: [EvaluationReport], thumbnails: [ExactString: Thumbnail] = [:],
        title: String = "NetRunner evaluation"
    ) -> String {
        var page = HTMLWriter()
        page.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        page.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        let single = reports.count == 1 ? reports.first : nil
        page.element("title", single?.test.name ?? title)
        page.raw("<style>\(style)</style></head><body>")
        page.element("h1", single?.test.name ?? title)
        for report in reports {
            section(report, heading: single == nil, thumbnails: thumbnails, into: &page)
        }
        page.raw(
            "<footer>Made by netrunner evaluate. Latency: \(page.escaped(reports.first?.latencyNote ?? "")).</footer>")
        page.raw("</body></html>\n")
        return page.text
    }

    private static func section(
        _ report: EvaluationReport, heading: Bool, thumbnails: [ExactString: Thumbnail], into page: inout HTMLWriter
    ) {
        let test = report.test
        page.raw("<section class=\"test\">")
        if heading { page.element("h2", "\(test.name)") }
        page.raw(
            "<p class=\"meta\">Test <code>\(page.escaped(test.id))</code> version \(page.escaped(test.version)) · "
                + "metric <code>\(page.escaped(test.metric))</code> · \(test.images) images × \(test.iterations) "
                + "iteration\(test.iterations == 1 ? "" : "s") · <code>\(page.escaped(test.path))</code></p>")
        summaryTable(report, into: &page)
        if report.models.count > 1 {
            comparisonCharts(report, into: &page)
        }
        for model in report.models {
            modelSection(model, test: test, thumbnails: thumbnails, into: &page)
        }
        page.raw("</section>")
    }

    // MARK: Summary

    private static func summaryTable(_ report: EvaluationReport, into page: inout HTMLWriter) {
        let detection = report.models.contains { $0.kind == .detection }
        page.element("h3", "Summary")
        page.raw("<table class=\"summary\"><thead><tr><th>Model</th><th>Answered</th><th>Failed</th>")
        for key in metricKeys(report) {
            page.raw(
                "<th title=\"\(page.escaped(key))\">\(page.escaped(metricTitle(key, metric: report.test.metric)))</th>")
        }
        if !detection { page.raw("<th>Top-1</th><th>Top-5</th>") }
        page.raw(
            "<th>Inference mean</th><th>median</th><th>p90</th><th>p99</th><th>Total mean</th></tr></thead><tbody>")
        let fastest = report.models.compactMap { $0.latency.inference?.mean }.min()
        for model in report.models {
            page.raw("<tr><td><a href=\"#\(anchor(report.test, model))\">\(page.escaped(model.id))</a></td>")
            page.raw("<td>\(model.evaluated)/\(model.images)</td>")
            page.raw("<td class=\"\(model.failures.isEmpty ? "" : "bad")\">\(model.failures.count)</td>")
            for key in metricKeys(report) {
                page.raw("<td>\(model.metric[key].map { metricText($0, kind: model.kind) } ?? "–")</td>")
            }
            if let scores = model.classification {
                page.raw("<td>\(percent(scores.top1))</td><td>\(percent(scores.top5))</td>")
            } else if !detection {
                page.raw("<td>–</td><td>–</td>")
            }
            if let inference = model.latency.inference {
                let ratio = fastest.map { inference.mean > 0 ? " (×\(fixed(inference.mean / $0, 2)))" : "" } ?? ""
                page.raw(
                    "<td>\(fixed(inference.mean, 2)) ms\(report.models.count > 1 ? ratio : "")</td>"
                        + "<td>\(fixed(inference.median, 2))</td><td>\(fixed(inference.p90, 2))</td>"
                        + "<td>\(fixed(inference.p99, 2))</td>")
            } else {
                page.raw("<td>–</td><td>–</td><td>–</td><td>–</td>")
            }
            page.raw("<td>\(model.latency.total.map { fixed($0.mean, 2) + " ms" } ?? "–")</td></tr>")
        }
        page.raw("</tbody></table>")
    }

    /// Accuracies as percentages, average precision as COCO prints it (0 to 1).
    private static func metricText(_ value: Double, kind: ImageTask.Kind) -> String {
        kind == .detection ? fixed(value, 3) : percent(value)
    }

    /// A metric's key as a heading: `classification_accuracy` (Net Runner's key for its top-5 or
    /// top-1 metric) and `top3_accuracy` are "Accuracy (top-5)", "Accuracy (top-3)"; the
    /// detectors' `mAP50` and `mAP50to95` are "mAP@0.5" and "mAP@0.5:0.95".
    static func metricTitle(_ key: String, metric: String) -> String {
        switch key {
        case "classification_accuracy":
            return TopKAccuracy.named(metric).map { "Accuracy (top-\($0.k))" } ?? "Accuracy"
        case "mAP50": return "mAP@0.5"
        case "mAP50to95": return "mAP@0.5:0.95"
        default:
            if key.hasPrefix("top"), key.hasSuffix("_accuracy"), let k = Int(key.dropFirst(3).dropLast(9)) {
                return "Accuracy (top-\(k))"
            }
            return key
        }
    }

    private static func metricKeys(_ report: EvaluationReport) -> [String] {
        Set(report.models.flatMap(\.metric.keys)).sorted()
    }

    /// Several models side by side: the metric as bars, and latency as ranges.
    private static func comparisonCharts(_ report: EvaluationReport, into page: inout HTMLWriter) {
        page.element("h3", "Side by side")
        page.raw("<div class=\"charts\">")
        let key = metricKeys(report).first
        if let key {
            let bars = report.models.map { ($0.id, $0.metric[key] ?? 0) }
            let kind = report.models.first?.kind ?? .classification
            page.raw(
                barChart(
                    title: metricTitle(key, metric: report.test.metric), bars: bars, maximum: 1,
                    format: { metricText($0, kind: kind) }))
        }
        let latencies = report.models.compactMap { model in model.latency.inference.map { (model.id, $0) } }
        if !latencies.isEmpty {
            page.raw(rangeChart(title: "Inference latency (ms): min, median, p90, p99, max", latencies))
        }
        page.raw("</div>")
        // Per-class recall of each classifier, one column per model.
        let classifiers = report.models.filter { $0.classification != nil }
        if classifiers.count > 1 {
            let classes = Set(classifiers.flatMap { $0.classification?.perClass.map(\.label) ?? [] }).sorted()
            page.element("h4", "Accuracy per class (recall), side by side")
            page.raw("<table class=\"perclass\"><thead><tr><th>Class</th>")
            for model in classifiers { page.raw("<th>\(page.escaped(model.id))</th>") }
            page.raw("</tr></thead><tbody>")
            for label in classes {
                page.raw("<tr><td>\(page.escaped(label))</td>")
                for model in classifiers {
                    let stats = model.classification?.perClass.first { $0.label == label }
                    page.raw("<td>\(stats.map { meter($0.recall) + " " + percent($0.recall) } ?? "–")</td>")
                }
                page.raw("</tr>")
            }
            page.raw("</tbody></table>")
        }
    }

    // MARK: One model

    private static func modelSection(
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
        guard model.kind == .classification else { return "every expected box found at IoU 0.5, nothing else" }
        let key = model.metric.keys.sorted().first ?? ""
        return key.isEmpty ? "by the test's metric" : "by the test's metric, \(metricTitle(key, metric: metric))"
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

    // MARK: Charts (inline SVG)

    private static func histogramChart(title: String, _ histogram: ModelReport.Histogram) -> String {
        let width = 360.0
        let height = 166.0
        let left = 34.0
        let bottom = 24.0
        let plotWidth = width - left - 8
        // The title has the top line to itself; the count axis's label ("runs") sits on the
        // second, over the axis, so a long title never runs into it.
        let plotHeight = height - bottom - 34
        let largest = Double(max(1, histogram.counts.max() ?? 1))
        let barWidth = plotWidth / Double(max(1, histogram.counts.count))
        var svg =
            "<svg class=\"chart\" width=\"\(Int(width))\" height=\"\(Int(height))\" role=\"img\">"
            + "<text x=\"\(left)\" y=\"12\" class=\"title\">\(HTMLWriter.escape(title)) (ms)</text>"
        for (index, count) in histogram.counts.enumerated() where count > 0 {
            let barHeight = plotHeight * Double(count) / largest
            let x = left + Double(index) * barWidth
            let y = height - bottom - barHeight
            let low = histogram.lower + Double(index) * histogram.width
            svg +=
                "<rect class=\"bar\" x=\"\(fixed(x, 1))\" y=\"\(fixed(y, 1))\" width=\"\(fixed(max(1, barWidth - 1), 1))\" "
                + "height=\"\(fixed(barHeight, 1))\"><title>\(fixed(low, 2))–\(fixed(low + histogram.width, 2)) ms: "
                + "\(count)</title></rect>"
        }
        let high = histogram.lower + histogram.width * Double(histogram.counts.count)
        let base = height - bottom
        svg +=
            "<line class=\"axis\" x1=\"\(left)\" y1=\"\(base)\" x2=\"\(width - 8)\" y2=\"\(base)\"/>"
            + "<line class=\"axis\" x1=\"\(left)\" y1=\"\(base)\" x2=\"\(left)\" y2=\"\(base - plotHeight)\"/>"
        // Ticks: five on the latency axis (ms), three on the count axis.
        for tick in 0...4 {
            let x = left + plotWidth * Double(tick) / 4
            let value = histogram.lower + (high - histogram.lower) * Double(tick) / 4
            let anchor = tick == 0 ? "start" : tick == 4 ? "end" : "middle"
            svg +=
                "<line class=\"axis\" x1=\"\(fixed(x, 1))\" y1=\"\(base)\" x2=\"\(fixed(x, 1))\" y2=\"\(base + 4)\"/>"
                + "<text x=\"\(fixed(x, 1))\" y=\"\(height - 6)\" text-anchor=\"\(anchor)\">\(fixed(value, 2))</text>"
        }
        for tick in 0...2 {
            let count = Int((largest * Double(tick) / 2).rounded())
            let y = base - plotHeight * Double(count) / largest
            svg +=
                "<line class=\"axis\" x1=\"\(left - 3)\" y1=\"\(fixed(y, 1))\" x2=\"\(left)\" y2=\"\(fixed(y, 1))\"/>"
                + "<text x=\"\(left - 5)\" y=\"\(fixed(y + 4, 1))\" text-anchor=\"end\">\(count)</text>"
        }
        return svg + "<text x=\"\(left)\" y=\"\(base - plotHeight - 6)\" class=\"axislabel\">runs</text></svg>"
    }

    private static func barChart(
        title: String, bars: [(String, Double)], maximum: Double, format: (Double) -> String
    ) -> String {
        let rowHeight = 22.0
        let labelWidth = 210.0
        let barSpace = 200.0
        let height = 22 + rowHeight * Double(bars.count)
        var svg =
            "<svg class=\"chart\" width=\"\(Int(labelWidth + barSpace + 70))\" height=\"\(Int(height))\" role=\"img\">"
            + "<text x=\"0\" y=\"12\" class=\"title\">\(HTMLWriter.escape(title))</text>"
        for (index, bar) in bars.enumerated() {
            let y = 20 + rowHeight * Double(index)
            let length = barSpace * min(1, max(0, bar.1 / maximum))
            svg +=
                "<text x=\"\(labelWidth - 6)\" y=\"\(fixed(y + 14, 1))\" text-anchor=\"end\">\(HTMLWriter.escape(bar.0))</text>"
                + "<rect class=\"bar\" x=\"\(labelWidth)\" y=\"\(fixed(y + 3, 1))\" width=\"\(fixed(length, 1))\" height=\"15\"/>"
                + "<text x=\"\(fixed(labelWidth + length + 4, 1))\" y=\"\(fixed(y + 14, 1))\">\(format(bar.1))</text>"
        }
        return svg + "</svg>"
    }

    /// min-max whiskers, a p50-p90 box and a p99 tick per model, on one shared axis.
    private static func rangeChart(title: String, _ rows: [(String, LatencySummary)]) -> String {
        let rowHeight = 24.0
        let labelWidth = 210.0
        let axisWidth = 260.0
        let height = 40 + rowHeight * Double(rows.count)
        // A round axis end above the slowest maximum, so no whisker or tick sits on the edge.
        let top = niceCeiling((rows.map(\.1.max).max() ?? 1) * 1.05)
        let scale = axisWidth / max(top, 1e-9)
        var svg =
            "<svg class=\"chart\" width=\"\(Int(labelWidth + axisWidth + 20))\" height=\"\(Int(height))\" role=\"img\">"
            + "<text x=\"0\" y=\"12\" class=\"title\">\(HTMLWriter.escape(title))</text>"
        for (index, row) in rows.enumerated() {
            let y = 22 + rowHeight * Double(index)
            let summary = row.1
            let x = { (value: Double) in fixed(labelWidth + value * scale, 1) }
            svg +=
                "<text x=\"\(labelWidth - 6)\" y=\"\(fixed(y + 13, 1))\" text-anchor=\"end\">\(HTMLWriter.escape(row.0))</text>"
                + "<line class=\"axis\" x1=\"\(x(summary.min))\" y1=\"\(fixed(y + 9, 1))\" x2=\"\(x(summary.max))\" y2=\"\(fixed(y + 9, 1))\"/>"
                + "<rect class=\"bar\" x=\"\(x(summary.median))\" y=\"\(fixed(y + 2, 1))\" "
                + "width=\"\(fixed(max(1, (summary.p90 - summary.median) * scale), 1))\" height=\"14\">"
                + "<title>median \(fixed(summary.median, 2)), p90 \(fixed(summary.p90, 2)), p99 \(fixed(summary.p99, 2)) ms</title></rect>"
                + "<line class=\"p99\" x1=\"\(x(summary.p99))\" y1=\"\(fixed(y, 1))\" x2=\"\(x(summary.p99))\" y2=\"\(fixed(y + 18, 1))\"/>"
        }
        let axisY = 26 + rowHeight * Double(rows.count)
        svg +=
            "<text x=\"\(labelWidth)\" y=\"\(fixed(axisY, 1))\">0</text>"
            + "<text x=\"\(fixed(labelWidth + axisWidth / 2, 1))\" y=\"\(fixed(axisY, 1))\" text-anchor=\"middle\">"
            + "\(axisLabel(top / 2))</text>"
            + "<text x=\"\(labelWidth + axisWidth)\" y=\"\(fixed(axisY, 1))\" text-anchor=\"end\">\(axisLabel(top)) ms</text>"
        return svg + "</svg>"
    }

    /// The smallest of 1, 2, 2.5 and 5 times a power of ten that is at least `value`.
    static func niceCeiling(_ value: Double) -> Double {
        guard value.isFinite, value > 0 else { return 1 }
        var power = 1.0
        while power * 10 <= value { power *= 10 }
        while power > value { power /= 10 }
        for step in [1.0, 2, 2.5, 5, 10] where step * power >= value { return step * power }
        return 10 * power
    }

    /// An axis value without needless decimals (10, 2.5, 0.25).
    private static func axisLabel(_ value: Double) -> String {
        for decimals in 0...3 {
            let text = fixed(value, decimals)
            if abs((Double(text) ?? value) - value) < 1e-9 { return text }
        }
        return fixed(value, 3)
    }

    // MARK: Helpers

    private static func anchor(_ test: EvaluationReport.Test, _ model: ModelReport) -> String {
        String((test.id + "-" + model.id).map { $0.isLetter || $0.isNumber ? $0 : "-" })
    }

    private static func meter(_ value: Double) -> String {
        let width = Int((max(0, min(1, value)) * 80).rounded())
        return "<span class=\"meter\"><span style=\"width:\(width)px\"></span></span>"
    }

    private static func percent(_ value: Double) -> String {
        fixed(value * 100, 1) + "%"
    }

    static func fixed(_ value: Double, _ decimals: Int) -> String {
        fixedDecimals(value, decimals)
    }

    private static let style = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1180px;\
        color:#1d232a;padding:0 16px}h1{font-size:24px}h2{font-size:20px;border-bottom:2px solid #dde3ea;\
        padding-bottom:4px;margin-top:36px}h3{font-size:17px;margin-top:28px}h4{font-size:15px;margin:18px 0 6px}\
        .meta{color:#5b6670}code{font-size:12.5px}table{border-collapse:collapse;margin:6px 0 12px}\
        th,td{padding:4px 9px;border-bottom:1px solid #e4e8ec;text-align:right;white-space:nowrap}\
        th:first-child,td:first-child{text-align:left}thead th{background:#f3f5f7}td.bad{color:#b3261e;font-weight:600}\
        caption{caption-side:bottom;color:#5b6670;font-size:12px;text-align:left;padding-top:4px}\
        .charts{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}\
        svg.chart text{font-size:11px;fill:#44505c}svg.chart text.title{font-size:12px;font-weight:600;fill:#1d232a}\
        svg .bar{fill:#3b7dd8}svg .axis{stroke:#8a96a3;stroke-width:1}svg .p99{stroke:#d0542c;stroke-width:2}\
        .meter{display:inline-block;width:80px;height:9px;background:#e8ecf0;vertical-align:middle;border-radius:2px}\
        .meter span{display:block;height:9px;background:#3b7dd8;border-radius:2px}\
        .scroll{overflow-x:auto}table.confusion td{text-align:center;min-width:22px;border:1px solid #eef1f4}\
        table.confusion th.col{height:120px;vertical-align:bottom;padding:2px}\
        table.confusion th.col span{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:500}\
        .gallery{display:flex;flex-wrap:wrap;gap:14px}figure.card{margin:0;width:250px;border:1px solid #e0e5ea;\
        border-radius:6px;padding:6px;background:#fafbfc}figure.card.wrong{border-color:#e3a7a2}figure.card svg{display:block;max-width:100%;height:auto}\
        figcaption{font-size:12.5px;margin-top:4px;white-space:normal;word-break:break-all}figcaption ol{margin:4px 0 0 18px;padding:0}\
        rect.truth{fill:none;stroke:#1f9d3a;stroke-width:2;stroke-dasharray:5 3}rect.answer{fill:none;stroke:#d0342c;stroke-width:2}\
        span.truth{color:#1f9d3a;font-weight:600}span.answer{color:#d0342c;font-weight:600}\
        span.count{font-weight:600}span.count.right{color:#1f9d3a}span.count.wrong{color:#b3261e}\
        ul.failures{font-size:13px}footer{margin-top:40px;color:#7a8590;font-size:12px}
        """
}

/// Builds HTML text with everything from outside escaped.
struct HTMLWriter {
    private(set) var text = ""

    mutating func raw(_ html: String) {
        text += html
    }

    mutating func element(_ name: String, _ content: String) {
        text += "<\(name)>\(Self.escape(content))</\(name)>"
    }

    func escaped(_ value: String) -> String {
        Self.escape(value)
    }

    static func escape(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for character in value {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
