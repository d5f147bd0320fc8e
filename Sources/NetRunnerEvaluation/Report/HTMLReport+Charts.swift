import NetRunner

/// The charts: histograms, bars and latency ranges as inline SVG.
extension HTMLReport {
    static func histogramChart(title: String, _ histogram: ModelReport.Histogram) -> String {
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

    static func barChart(
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
    static func rangeChart(title: String, _ rows: [(String, LatencySummary)]) -> String {
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
}
