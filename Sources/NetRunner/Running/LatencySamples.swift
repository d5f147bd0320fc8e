import NetRunnerSupport

/// Latencies gathered one at a time in bounded memory, for runs of any length: a live stream
/// that runs for days, a bulk run over ten million photos.
///
/// The count, total, mean, standard deviation, minimum and maximum are exact (running sums,
/// Welford's update for the variance). The percentiles come from a uniform sample of at most
/// `capacity` latencies (reservoir sampling, Vitter's algorithm R, with a fixed-seed generator so
/// a run's summary does not change from one reading to the next): exact while there are no more
/// latencies than that, and off by a rank error of about `sqrt(p (1 - p) / capacity)` after (for
/// the p99 of 100,000 kept, about 0.03 percentile points).
///
/// The first `warmUp` latencies are kept aside and left out of the summary, if more came, as
/// ``LatencySummary/init(milliseconds:warmUp:)`` leaves them out.
public struct LatencySamples: Sendable {
    /// The most latencies kept for the percentiles.
    public let capacity: Int
    /// How many latencies at the front are left out as warm-up.
    public let warmUp: Int
    /// Every latency added, warm-up included (negative or not finite ones excluded).
    public private(set) var count = 0
    /// Latencies refused because they were negative or not finite.
    public private(set) var rejected = 0

    private var head: [Double] = []
    private var kept: [Double] = []
    private var total = 0.0
    private var mean = 0.0
    private var squares = 0.0
    private var lowest = Double.infinity
    private var highest = -Double.infinity
    private var generator = SplitMix64(seed: 0x6E65_7472_756E_6E72)

    /// Creates an empty set of samples.
    ///
    /// - Parameters:
    ///   - capacity: The most latencies kept for the percentiles (at least 1).
    ///   - warmUp: How many latencies at the front to leave out of the summary.
    public init(capacity: Int = 100_000, warmUp: Int = 0) {
        self.capacity = Swift.max(1, capacity)
        self.warmUp = Swift.max(0, warmUp)
    }

    /// Adds one latency in milliseconds; negative and not finite ones are counted in
    /// ``rejected`` and left out.
    public mutating func add(_ milliseconds: Double) {
        guard milliseconds.isFinite, milliseconds >= 0 else {
            rejected += 1
            return
        }
        count += 1
        if head.count < warmUp {
            head.append(milliseconds)
            return
        }
        let seen = count - head.count
        total += milliseconds
        let delta = milliseconds - mean
        mean += delta / Double(seen)
        squares += delta * (milliseconds - mean)
        lowest = Swift.min(lowest, milliseconds)
        highest = Swift.max(highest, milliseconds)
        if kept.count < capacity {
            kept.append(milliseconds)
        } else {
            let slot = Int(generator.next() % UInt64(seen))
            if slot < capacity { kept[slot] = milliseconds }
        }
    }

    /// The summary: `nil` when no latency was added.
    public var summary: LatencySummary? {
        let seen = count - head.count
        guard seen > 0 else {
            // No more latencies than the warm-up: none is left out.
            return LatencySummary(milliseconds: head)
        }
        let sorted = kept.sorted()
        return LatencySummary(
            count: seen, warmUpExcluded: head.count, totalMilliseconds: total, mean: mean,
            standardDeviation: (Swift.max(squares, 0) / Double(seen)).squareRoot(), min: lowest,
            median: LatencySummary.percentile(50, ofSorted: sorted),
            p90: LatencySummary.percentile(90, ofSorted: sorted),
            p99: LatencySummary.percentile(99, ofSorted: sorted), max: highest)
    }
}
