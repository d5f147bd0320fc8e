/// One variant's figures for one metric, as gbstats 0.8.0's statistics hold them: the number of
/// units (users, or events for a quantile), the mean (a rate, an average, or the quantile), and
/// the variance of one unit, from which every comparison derives its standard error.
///
/// Made only through the checking initialisers (counts from clients or the database may be
/// anything): `init(users:conversions:)` (gbstats' `ProportionStatistic`),
/// `init(count:sum:sumOfSquares:)` (`SampleMeanStatistic`, e.g. a score) and
/// `init(quantile:of:)` (`QuantileStatistic`, e.g. latency p90 from a `LatencySketch`).
package struct MetricSummary: Sendable, Equatable {
    /// The units: users for a rate or a mean, events for a quantile.
    package let count: Int
    /// The rate, the mean, or the quantile; 0 when there are no units.
    package let mean: Double
    /// The variance of one unit: p(1 − p) for a rate (as gbstats: no n/(n − 1)), the sample
    /// variance for a mean, the quantile's variance scaled to one unit.
    package let variance: Double
    /// Whether gbstats would call the variance zero (or negative) and give no result: a rate of
    /// 0 or 1, a mean of fewer than 2 units or of equal values, a quantile of too few events.
    package let hasZeroVariance: Bool

    /// A rate: `conversions` of `users` converted (a goal reached, a request failed).
    ///
    /// - Throws: `ExperimentStatisticsError.negativeCount` or `.conversionsExceedUsers`.
    package init(users: Int, conversions: Int) throws {
        guard users >= 0 else { throw ExperimentStatisticsError.negativeCount(field: "users", value: users) }
        guard conversions >= 0 else {
            throw ExperimentStatisticsError.negativeCount(field: "conversions", value: conversions)
        }
        guard conversions <= users else {
            throw ExperimentStatisticsError.conversionsExceedUsers(conversions: conversions, users: users)
        }
        let rate = users == 0 ? 0 : Double(conversions) / Double(users)
        count = users
        mean = rate
        variance = rate * (1 - rate)
        hasZeroVariance = variance <= 0
    }

    /// A continuous metric's mean over `count` units, from the sum of their values and the sum
    /// of their squares (what a client's reports add up to).
    ///
    /// - Throws: `ExperimentStatisticsError.negativeCount`, `.notFinite`, or `.impossibleSums`
    ///   (a negative sum of squares, or sums for no units).
    package init(count: Int, sum: Double, sumOfSquares: Double) throws {
        guard count >= 0 else { throw ExperimentStatisticsError.negativeCount(field: "count", value: count) }
        guard sum.isFinite else { throw ExperimentStatisticsError.notFinite(field: "sum") }
        guard sumOfSquares.isFinite else { throw ExperimentStatisticsError.notFinite(field: "sum of squares") }
        guard sumOfSquares >= 0 else {
            throw ExperimentStatisticsError.impossibleSums("the sum of squares is negative")
        }
        guard count > 0 || (sum == 0 && sumOfSquares == 0) else {
            throw ExperimentStatisticsError.impossibleSums("sums were given for no units")
        }
        let n = Double(count)
        self.count = count
        mean = count == 0 ? 0 : sum / n
        let variance = count <= 1 ? 0 : (sumOfSquares - sum * sum / n) / (n - 1)
        // Squares of large sums overflow to ∞ and ∞ − ∞ is NaN: no variance is known then.
        self.variance = variance.isFinite ? variance : 0
        hasZeroVariance = !(self.variance > 0)
    }

    /// The quantile at `level` (0.9 for p90) of a sketch's values, with gbstats'
    /// `QuantileStatistic` variance: the sketch's quantiles at
    /// level ± 1.96·√(level(1 − level)/n) as the lower and upper bounds, n* = n (independent
    /// events), variance = (n − 1)·((upper − lower)/(2·1.96))², at least 1e-5 from 100 events.
    ///
    /// - Throws: `ExperimentStatisticsError.outOfRange` for a level outside (0, 1).
    package init(quantile level: Double, of sketch: LatencySketch) throws {
        guard level.isFinite, level > 0, level < 1 else {
            throw ExperimentStatisticsError.outOfRange(field: "quantile level", expected: "in (0, 1)", found: level)
        }
        let z = NormalDistribution.quantile(0.975)
        let n = sketch.count
        let spread = n > 0 ? z * (level * (1 - level) / Double(n)).squareRoot() : 0
        let estimate = sketch.quantile(level) ?? 0
        let lower = sketch.quantile(max(0, level - spread)) ?? 0
        let upper = sketch.quantile(min(1, level + spread)) ?? 0
        try self.init(quantileCount: n, level: level, estimate: estimate, lower: lower, upper: upper)
    }

    /// A quantile from its estimate and its lower and upper bounds over `quantileCount` events,
    /// as gbstats' `QuantileStatistic` (n* = n): variance = (n − 1)·((upper − lower)/(2·1.96))²,
    /// at least 1e-5 from 100 events; zero (no result) for fewer than 1.96²·level/(1 − level)
    /// or 1.96²·(1 − level)/level events, or for no spread under 1,000 events.
    ///
    /// - Throws: `ExperimentStatisticsError.negativeCount`, `.notFinite` or `.outOfRange`.
    package init(quantileCount: Int, level: Double, estimate: Double, lower: Double, upper: Double) throws {
        guard quantileCount >= 0 else {
            throw ExperimentStatisticsError.negativeCount(field: "events", value: quantileCount)
        }
        guard level.isFinite, level > 0, level < 1 else {
            throw ExperimentStatisticsError.outOfRange(field: "quantile level", expected: "in (0, 1)", found: level)
        }
        for (field, value) in [("estimate", estimate), ("lower", lower), ("upper", upper)] where !value.isFinite {
            throw ExperimentStatisticsError.notFinite(field: "quantile \(field)")
        }
        let z = NormalDistribution.quantile(0.975)
        let n = Double(quantileCount)
        var initial = quantileCount > 1 ? (n - 1) * pow2((upper - lower) / (2 * z)) : 0
        if !initial.isFinite { initial = 0 }
        let aboveOne = n <= z * z * level / (1 - level)
        let belowZero = n <= z * z * (1 - level) / level
        count = quantileCount
        mean = estimate
        variance = quantileCount < 100 ? initial : max(initial, 1e-5)
        hasZeroVariance = aboveOne || belowZero || (initial <= 0 && quantileCount < 1000)
    }

    /// How the variant's mean is compared with the baseline's.
    package enum Scale: String, Sendable, Codable {
        /// The relative change (variant − baseline)/baseline, by the delta method (gbstats'
        /// default, and what Firebase reports).
        case relative
        /// The difference variant − baseline, in the metric's own unit.
        case absolute
    }

    /// gbstats' `frequentist_diff` and `frequentist_variance`: the effect of the variant over
    /// the baseline and the variance of that estimate.
    ///
    /// - Returns: the estimate and its variance (NaN or ∞ where the baseline's mean is 0 and
    ///   `scale` is relative: callers check that first).
    package static func effect(
        baseline: MetricSummary, variant: MetricSummary, scale: Scale
    ) -> (estimate: Double, variance: Double) {
        let (a, b) = (baseline, variant)
        let (na, nb) = (Double(a.count), Double(b.count))
        switch scale {
        case .relative:
            return (
                (b.mean - a.mean) / a.mean,
                b.variance / (pow2(a.mean) * nb) + a.variance * pow2(b.mean) / (pow2(pow2(a.mean)) * na)
            )
        case .absolute:
            return (b.mean - a.mean, b.variance / nb + a.variance / na)
        }
    }
}

/// x².
private func pow2(_ x: Double) -> Double { x * x }
