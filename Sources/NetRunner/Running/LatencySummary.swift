import NetRunnerSupport

/// Latency statistics over many runs: what Net Runner's `LatencyCounter` keeps (average and
/// total), what benchmark_model prints (count, mean, standard deviation, min, max), and
/// percentiles.
///
/// Percentiles interpolate linearly between the two nearest order statistics, as NumPy's
/// `percentile` does by default. Warm-up runs are dropped from the front of the samples before
/// anything is computed, and ``warmUpExcluded`` says how many were.
public struct LatencySummary: Equatable, Sendable, Codable {
    /// The number of runs the statistics cover (warm-up excluded).
    public var count: Int
    /// The number of runs dropped from the front as warm-up.
    public var warmUpExcluded: Int
    /// The sum of all runs, in milliseconds.
    public var totalMilliseconds: Double
    /// The mean, in milliseconds.
    public var mean: Double
    /// The population standard deviation, in milliseconds (benchmark_model's `std`).
    public var standardDeviation: Double
    /// The shortest run, in milliseconds.
    public var min: Double
    /// The 50th percentile, in milliseconds.
    public var median: Double
    /// The 90th percentile, in milliseconds.
    public var p90: Double
    /// The 99th percentile, in milliseconds.
    public var p99: Double
    /// The longest run, in milliseconds.
    public var max: Double

    /// Summarises latencies given in milliseconds, in the order they were measured; `nil` when
    /// there are no samples, or when a sample is negative or not finite.
    ///
    /// - Parameters:
    ///   - milliseconds: One latency per run, in the order of the runs.
    ///   - warmUp: How many runs at the front to leave out. If there are no more runs than
    ///     that, none is left out (a summary of one cold run is better than none).
    public init?(milliseconds: [Double], warmUp: Int = 0) {
        guard !milliseconds.isEmpty, milliseconds.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
            return nil
        }
        let dropped = milliseconds.count > warmUp ? Swift.max(warmUp, 0) : 0
        let samples = milliseconds.dropFirst(dropped).sorted()
        let total = samples.reduce(0, +)
        let mean = total / Double(samples.count)
        let variance = samples.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(samples.count)
        count = samples.count
        warmUpExcluded = dropped
        totalMilliseconds = total
        self.mean = mean
        standardDeviation = variance.squareRoot()
        min = samples[0]
        max = samples[samples.count - 1]
        median = Self.percentile(50, ofSorted: samples)
        p90 = Self.percentile(90, ofSorted: samples)
        p99 = Self.percentile(99, ofSorted: samples)
    }

    /// A summary computed elsewhere (``LatencySamples``).
    init(
        count: Int, warmUpExcluded: Int, totalMilliseconds: Double, mean: Double, standardDeviation: Double,
        min: Double, median: Double, p90: Double, p99: Double, max: Double
    ) {
        self.count = count
        self.warmUpExcluded = warmUpExcluded
        self.totalMilliseconds = totalMilliseconds
        self.mean = mean
        self.standardDeviation = standardDeviation
        self.min = min
        self.median = median
        self.p90 = p90
        self.p99 = p99
        self.max = max
    }

    /// Summarises latencies given as durations, in the order they were measured.
    ///
    /// - Parameters:
    ///   - durations: One latency per run.
    ///   - warmUp: How many runs at the front to leave out.
    public init?(_ durations: [Duration], warmUp: Int = 0) {
        self.init(milliseconds: durations.map(\.inMilliseconds), warmUp: warmUp)
    }

    /// The `percent` percentile of sorted samples, interpolating linearly between neighbours.
    ///
    /// - Parameters:
    ///   - percent: A percentage from 0 to 100.
    ///   - sorted: Samples in ascending order; not empty.
    /// - Returns: The percentile.
    public static func percentile(_ percent: Double, ofSorted sorted: [Double]) -> Double {
        precondition(!sorted.isEmpty, "percentile of no samples")
        let position = Swift.min(Swift.max(percent, 0), 100) / 100 * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = Swift.min(lower + 1, sorted.count - 1)
        let fraction = position - Double(lower)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
    }
}
