#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The decision rule of an experiment, valid when it is looked at every minute: an always-valid
/// test of the variant against the baseline, which declares a winner, a loser, or to continue.
///
/// The rule is gbstats 0.8.0's sequential test (`SequentialTwoSidedTTest`): the asymptotic
/// confidence sequence of Waudby-Smith et al. 2023 (arXiv 2103.06476v7, eqs. 9, 155, 161), a
/// normal-mixture martingale, the same construction as Johari et al.'s mSPRT ("Always valid
/// inference") with a normal mixing distribution. Its e-value is
/// e = exp(ρ²·t²/(2(Nρ² + 1))) / √(Nρ² + 1), with N the units of both arms, t² = d²·N/V the
/// squared z-statistic of the difference d, and ρ² = (−2 ln α + ln(1 − 2 ln α))/N*, where the
/// tuning N* is the total sample size at which the sequence is narrowest (gbstats' default
/// 5,000). By Ville's inequality the chance that 1/e ever drops below α, however often one
/// looks, is at most α (asymptotically: the variance is estimated), so the decision is taken
/// the first time p = min(1, 1/e) < α, and the caller stops the test there.
///
/// Why this rule and not a Bayesian expected-loss threshold: an expected-loss threshold bounds
/// the loss of a wrong choice but not the rate of false winners, which grows with every look;
/// the mixture test bounds that rate at α whatever the looks, with closed forms only, and is
/// GrowthBook's own, so its figures are checked against gbstats live.
///
/// Why the absolute difference: the rule tests variant − baseline in the metric's unit
/// (gbstats' `difference_type="absolute"`). On the delta method's relative change, at low
/// rates, a variant with few events gets too small a variance: in 2,000 simulated A/A tests of
/// a 2% rate checked every 100 users up to 10,000, the relative scale declared a decrease 9.4%
/// of the time, the absolute one 1%. A zero difference is the same hypothesis on either scale.
///
/// The sample size: with α = 0.05 and N* = 5,000, checked after every 100 users per arm, a true
/// change from 50% to 55% is found with at least 80% power within 4,000 users per arm
/// (measured in `ExperimentStatisticsTests`, with the false positives of 500 A/A tests).
package struct SequentialComparison: Sendable, Equatable {
    /// gbstats' default tuning N*: the total units (both arms) at which the sequence is narrowest.
    package static let defaultTuning = 5_000.0

    /// What the rule says now.
    package enum Decision: String, Sendable, Codable {
        /// The variant is better than the baseline at the rule's confidence: stop, it wins.
        case winner
        /// The variant is worse: stop, it loses.
        case loser
        /// Not yet decided: keep collecting.
        case `continue`
    }

    /// Whether the figures were computed (`BayesianComparison.Status`'s cases and rules, but
    /// for the baseline mean of 0, which an absolute difference allows).
    package let status: BayesianComparison.Status
    /// The estimated difference, variant − baseline, in the metric's unit.
    package let difference: Double
    /// The estimate's standard error.
    package let standardError: Double
    /// The always-valid p-value of "the difference is `nullDifference`", min(1, 1/e).
    package let pValue: Double
    /// The lower end of the always-valid confidence sequence (1 − α) of the difference.
    package let lower: Double
    /// The upper end of the confidence sequence.
    package let upper: Double
    /// The decision of a goal metric: `winner` when the difference is significant and better.
    package let decision: Decision

    /// Tests `variant` against `baseline`.
    ///
    /// - Parameters:
    ///   - baseline: the baseline's figures.
    ///   - variant: the variant's figures.
    ///   - alpha: the chance of a false decision, over every look (0.05).
    ///   - tuning: N*, the total units at which the sequence is narrowest; the planned sample.
    ///   - nullDifference: the difference tested against (gbstats' `test_value`): 0, or a
    ///     guardrail's margin.
    ///   - inverse: true when lower is better (a failure rate): a significant decrease wins.
    /// - Throws: `ExperimentStatisticsError.outOfRange` or `.notFinite` for settings out of range.
    package init(
        baseline: MetricSummary, variant: MetricSummary, alpha: Double = 0.05, tuning: Double = defaultTuning,
        nullDifference: Double = 0, inverse: Bool = false
    ) throws {
        guard alpha.isFinite, alpha > 0, alpha < 1 else {
            throw ExperimentStatisticsError.outOfRange(field: "alpha", expected: "in (0, 1)", found: alpha)
        }
        guard tuning.isFinite, tuning >= 1 else {
            throw ExperimentStatisticsError.outOfRange(field: "tuning", expected: "at least 1", found: tuning)
        }
        guard nullDifference.isFinite else { throw ExperimentStatisticsError.notFinite(field: "null difference") }
        let failure: BayesianComparison.Status? =
            if baseline.count == 0 || variant.count == 0 {
                .noUnits
            } else if baseline.hasZeroVariance || variant.hasZeroVariance {
                .zeroVariance
            } else {
                nil
            }
        let (estimate, variance) = MetricSummary.effect(baseline: baseline, variant: variant, scale: .absolute)
        guard failure == nil, variance.isFinite, variance > 0, estimate.isFinite else {
            status = failure ?? .zeroVariance
            (difference, standardError, pValue, lower, upper) = (0, 0, 1, 0, 0)
            decision = .continue
            return
        }
        let total = Double(baseline.count) + Double(variant.count)
        let rho2 = (-2 * log(alpha) + log(-2 * log(alpha) + 1)) / tuning
        let spread = total * rho2 + 1
        // eq. 155, in logarithms: e = exp(ρ²t²/(2(Nρ² + 1)))/√(Nρ² + 1).
        let t2 = (estimate - nullDifference) * (estimate - nullDifference) / variance
        let logE = rho2 * t2 * total / (2 * spread) - 0.5 * log(spread)
        // eq. 9: the half-width, √(V·N)·√(2(Nρ² + 1)·ln(√(Nρ² + 1)/α)/(Nρ)²).
        let width = (variance * 2 * spread * log(spread.squareRoot() / alpha) / (total * rho2)).squareRoot()
        status = .computed
        difference = estimate
        standardError = variance.squareRoot()
        pValue = logE <= 0 ? 1 : exp(-logE)
        lower = estimate - width
        upper = estimate + width
        if pValue < alpha {
            let increased = estimate > nullDifference
            decision = increased != inverse ? .winner : .loser
        } else {
            decision = .continue
        }
    }

    /// Which way a guardrail metric goes wrong.
    package enum Harm: String, Sendable, Codable {
        /// Higher is worse: a failure rate, crashes per user, latency p90.
        case higherIsWorse
        /// Lower is worse: a floor on the goal.
        case lowerIsWorse
    }

    /// A guardrail's verdict: whether the variant is worse than the baseline by more than `margin`.
    ///
    /// At the rule's confidence, on one side of the same always-valid test: the variant is
    /// declared worse when the confidence sequence of `variant − baseline ∓ margin` lies wholly
    /// on the harmful side (p < α with the estimate there). Using the two-sided sequence for one
    /// side is conservative: the chance of ever declaring an equal variant
    /// worse stays at most α, however often it is checked.
    ///
    /// - Parameters:
    ///   - baseline: the baseline's figures.
    ///   - variant: the variant's figures.
    ///   - harm: which way is worse.
    ///   - margin: how much worse, in the metric's unit, is tolerated (0: none; 0.005: half a
    ///     percentage point of failure rate).
    ///   - alpha: the chance of declaring a harmless variant worse, over every look.
    ///   - tuning: N*, as for the goal.
    /// - Returns: true when the variant is worse: roll it back.
    /// - Throws: `ExperimentStatisticsError` for settings out of range.
    package static func isWorse(
        baseline: MetricSummary, variant: MetricSummary, harm: Harm, margin: Double = 0, alpha: Double = 0.05,
        tuning: Double = defaultTuning
    ) throws -> Bool {
        guard margin.isFinite, margin >= 0 else {
            throw ExperimentStatisticsError.outOfRange(field: "margin", expected: "0 or more", found: margin)
        }
        let test = try SequentialComparison(
            baseline: baseline, variant: variant, alpha: alpha, tuning: tuning,
            nullDifference: harm == .higherIsWorse ? margin : -margin, inverse: harm == .higherIsWorse)
        return test.decision == .loser
    }
}
