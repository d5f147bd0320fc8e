/// A variant against the baseline on one metric, the Bayesian way GrowthBook's stats engine
/// (gbstats 0.8.0, `EffectBayesianABTest` with its default flat prior) reports it: the chance
/// to beat the baseline, the expected relative change, its 95% credible interval, and the risk
/// (expected loss) of choosing either side.
///
/// gbstats 0.8.0 takes the posterior of the change to be normal: the delta method's mean and
/// variance of (variant − baseline)/baseline (`MetricSummary.effect`), which for a rate is the
/// normal approximation of the two Beta posteriors' relative change (Firebase's figures), and
/// which serves alike for a mean (a score) and a quantile (latency p90). Every figure is a
/// closed form over `NormalDistribution`: no sampling, so it is cheap and the same on every
/// look.
///
/// Where gbstats gives no result (`status` is not `.computed`: a baseline mean of 0, a variant
/// without units, a variance of 0) the figures are gbstats' uninformative ones: chance 0.5,
/// expected change 0, interval [0, 0], risks 0.
///
/// These figures describe; they are not the stopping rule: looked at every minute, a chance
/// to beat of 95% is crossed by chance far more often than 5% of the time. Decide with
/// `SequentialComparison`.
package struct BayesianComparison: Sendable, Equatable {
    /// Whether the figures were computed, or why gbstats gives its uninformative ones.
    package enum Status: String, Sendable, Codable {
        /// The figures are computed.
        case computed
        /// The baseline's mean is 0: no relative change exists (gbstats checks this first).
        case baselineZero
        /// The baseline or the variant has no units.
        case noUnits
        /// The baseline's or the variant's variance is 0 (a rate of 0 or 1, one user...).
        case zeroVariance
    }

    /// Whether the figures are computed.
    package let status: Status
    /// The probability that the variant beats the baseline (for an inverse metric, such as a
    /// failure rate, that its mean is lower).
    package let chanceToBeatBaseline: Double
    /// The posterior mean of the relative change (0.1: 10% above the baseline).
    package let expectedChange: Double
    /// The posterior standard deviation of the relative change.
    package let standardDeviation: Double
    /// The lower end of the credible interval of the relative change (95% by default).
    package let lower: Double
    /// The upper end of the credible interval.
    package let upper: Double
    /// The expected loss of keeping the baseline: how much relative change is given up, on
    /// average, if the variant is in fact better (gbstats' `risk[0]`).
    package let riskOfBaseline: Double
    /// The expected loss of choosing the variant, if it is in fact worse (gbstats' `risk[1]`).
    package let riskOfVariant: Double

    /// Compares `variant` with `baseline`.
    ///
    /// - Parameters:
    ///   - baseline: the baseline's figures.
    ///   - variant: the variant's figures.
    ///   - alpha: 1 − the credible interval's probability (0.05: a 95% interval).
    ///   - inverse: true when lower is better (a failure rate, a latency): the chance to beat
    ///     and the risks then favour a decrease, as gbstats' `inverse` metrics.
    /// - Throws: `ExperimentStatisticsError.outOfRange` for an `alpha` outside (0, 1).
    package init(baseline: MetricSummary, variant: MetricSummary, alpha: Double = 0.05, inverse: Bool = false) throws {
        guard alpha.isFinite, alpha > 0, alpha < 1 else {
            throw ExperimentStatisticsError.outOfRange(field: "alpha", expected: "in (0, 1)", found: alpha)
        }
        // gbstats' order of checks.
        let failure: Status? =
            if baseline.mean == 0 {
                .baselineZero
            } else if baseline.count == 0 || variant.count == 0 {
                .noUnits
            } else if baseline.hasZeroVariance || variant.hasZeroVariance {
                .zeroVariance
            } else {
                nil
            }
        let (mean, variance) = MetricSummary.effect(baseline: baseline, variant: variant, scale: .relative)
        guard failure == nil, variance.isFinite, variance > 0, mean.isFinite else {
            status = failure ?? .zeroVariance
            (chanceToBeatBaseline, expectedChange, standardDeviation) = (0.5, 0, 0)
            (lower, upper, riskOfBaseline, riskOfVariant) = (0, 0, 0, 0)
            return
        }
        let sd = variance.squareRoot()
        let z = NormalDistribution.quantile(1 - alpha / 2)
        let better = NormalDistribution.cdf(mean / sd)
        status = .computed
        chanceToBeatBaseline = inverse ? 1 - better : better
        expectedChange = mean
        standardDeviation = sd
        lower = mean - z * sd
        upper = mean + z * sd
        let gainForgone = NormalDistribution.expectedPositivePart(mean: mean, standardDeviation: sd)
        let lossTaken = NormalDistribution.expectedPositivePart(mean: -mean, standardDeviation: sd)
        (riskOfBaseline, riskOfVariant) = inverse ? (lossTaken, gainForgone) : (gainForgone, lossTaken)
    }
}
