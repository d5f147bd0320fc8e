public import NetRunner
public import NetRunnerImage
import NetRunnerSupport

/// Renders evaluation reports as one self-contained HTML page: no script, no network, every
/// chart inline SVG and every thumbnail a `data:` URI, so the file can be mailed or archived
/// and opens anywhere.
///
/// This file holds the page and its summary; one model's section is in `HTMLReport+Model`, the
/// inline SVG charts in `HTMLReport+Charts`, the escaping in `HTMLWriter`.
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
        // Top-1 and top-5 columns when a classifier is among the models.
        let classifier = report.models.contains { $0.classification != nil }
        page.element("h3", "Summary")
        page.raw("<table class=\"summary\"><thead><tr><th>Model</th><th>Answered</th><th>Failed</th>")
        for key in metricKeys(report) {
            page.raw(
                "<th title=\"\(page.escaped(key))\">\(page.escaped(metricTitle(key, metric: report.test.metric)))</th>")
        }
        if classifier { page.raw("<th>Top-1</th><th>Top-5</th>") }
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
            } else if classifier {
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

    /// A metric's value as its task's evaluation writes it: accuracies as percentages, average
    /// precision as COCO prints it (0 to 1).
    private static func metricText(_ value: Double, kind: ImageTask.Kind) -> String {
        TaskEvaluationRegistry.evaluation(for: kind)?.metricText(value) ?? fixed(value, 3)
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

    // MARK: Helpers

    static func anchor(_ test: EvaluationReport.Test, _ model: ModelReport) -> String {
        String((test.id + "-" + model.id).map { $0.isLetter || $0.isNumber ? $0 : "-" })
    }

    static func meter(_ value: Double) -> String {
        let width = Int((max(0, min(1, value)) * 80).rounded())
        return "<span class=\"meter\"><span style=\"width:\(width)px\"></span></span>"
    }

    static func percent(_ value: Double) -> String {
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
