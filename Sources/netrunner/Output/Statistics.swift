import NetRunner

/// Summary statistics of a series of timings, as TFLite's benchmark_model reports them.
struct Statistics: Codable, Equatable {
    var count: Int
    var first: Double
    var min: Double
    var max: Double
    var mean: Double
    var std: Double
    var median: Double
    var p5: Double
    var p95: Double

    /// Summarises `values` (which must not be empty), in their own unit.
    init(_ values: [Double]) {
        precondition(!values.isEmpty, "Statistics need at least one value.")
        let sorted = values.sorted()
        count = values.count
        first = values[0]
        min = sorted[0]
        max = sorted[sorted.count - 1]
        let average = values.reduce(0, +) / Double(values.count)
        mean = average
        let variance = values.reduce(0) { $0 + ($1 - average) * ($1 - average) } / Double(values.count)
        std = variance.squareRoot()
        median = Self.percentile(sorted, 50)
        p5 = Self.percentile(sorted, 5)
        p95 = Self.percentile(sorted, 95)
    }

    /// The `p`-th percentile of sorted values, interpolating linearly between ranks.
    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        LatencySummary.percentile(p, ofSorted: sorted)
    }
}
