import NetRunnerHub
import NetRunnerSupport

/// An experiment's figures from its arms' counts: the goal's rate per arm with gbstats'
/// Bayesian comparison against the baseline (chance to beat, relative change and its 95%
/// interval), the always-valid decision (``SequentialComparison``), the latency quantiles, and
/// each guardrail's verdict (``SequentialComparison/isWorse(baseline:variant:harm:margin:alpha:tuning:)``).
///
/// The goal and the failure rate count events (each outcome, each inference), the crash rate
/// counts clients; a client's events are taken as independent, which its sticky assignment
/// makes only approximately true. The failure and crash guardrails test Agresti-Caffo
/// adjusted rates (``adjusted(_:_:)``), so that a baseline without failures does not blind them.
enum ExperimentAnalyzer {
    /// The figures, and the first guardrail an arm trips (`nil`: none).
    static func analyze(_ experiment: HubExperiment, counts: [ExperimentArmCounts]) -> (
        analysis: HubExperimentAnalysis,
        tripped: (arm: HubExperimentAnalysis.Arm, guardrail: HubExperimentAnalysis.Guardrail)?
    ) {
        let baselineIndex = experiment.baselineArm
        let empty = try? ExperimentArmCounts()
        let baseline = baselineIndex < counts.count ? counts[baselineIndex] : empty
        var arms: [HubExperimentAnalysis.Arm] = []
        var tripped: (arm: HubExperimentAnalysis.Arm, guardrail: HubExperimentAnalysis.Guardrail)?
        for (index, variant) in experiment.variants.enumerated() {
            guard let counted = index < counts.count ? counts[index] : empty, let baseline else { continue }
            var arm = figures(index: index, variant: variant, counts: counted, isBaseline: index == baselineIndex)
            if index != baselineIndex {
                compare(&arm, counts: counted, baseline: baseline, experiment: experiment)
                if tripped == nil, let trip = arm.guardrails.first(where: \.tripped) { tripped = (arm, trip) }
            }
            arms.append(arm)
        }
        return (HubExperimentAnalysis(arms: arms), tripped)
    }

    /// An arm's own figures.
    static func figures(index: Int, variant: HubAliasTarget, counts: ExperimentArmCounts, isBaseline: Bool)
        -> HubExperimentAnalysis.Arm
    {
        HubExperimentAnalysis.Arm(
            arm: index, version: variant.version, weight: variant.weight, baseline: isBaseline,
            clients: counts.clients, events: counts.events, outcomes: counts.outcomes,
            goalRate: rate(counts.successes, counts.outcomes), inferences: counts.inferences,
            failureRate: rate(counts.failures, counts.inferences), crashRate: rate(counts.crashClients, counts.clients),
            latencyP50Ms: counts.latency.quantile(0.5), latencyP90Ms: counts.latency.quantile(0.9))
    }

    /// A variant's comparison with the baseline and its guardrails.
    static func compare(
        _ arm: inout HubExperimentAnalysis.Arm, counts: ExperimentArmCounts, baseline: ExperimentArmCounts,
        experiment: HubExperiment
    ) {
        let alpha = experiment.alpha
        guard let goal = try? MetricSummary(users: counts.outcomes, conversions: counts.successes),
            let baseGoal = try? MetricSummary(users: baseline.outcomes, conversions: baseline.successes)
        else { return }
        if let bayes = try? BayesianComparison(baseline: baseGoal, variant: goal) {
            arm.chanceToBeatBaseline = bayes.chanceToBeatBaseline
            arm.relativeChange = bayes.expectedChange
            arm.relativeChangeLower = bayes.lower
            arm.relativeChangeUpper = bayes.upper
        }
        arm.decision =
            (try? SequentialComparison(baseline: baseGoal, variant: goal, alpha: alpha))?.decision.rawValue
            ?? SequentialComparison.Decision.continue.rawValue
        for (name, margin) in experiment.guardrails.watched {
            let pair: (MetricSummary, MetricSummary)?
            let harm: SequentialComparison.Harm
            // The figures shown: the rates as counted, whatever the test's adjustment.
            var shown: (Double, Double)?
            switch name {
            case "failure_rate":
                pair = summaries({ try adjusted($0.inferences, $0.failures) }, baseline, counts)
                shown = (rate(counts.failures, counts.inferences), rate(baseline.failures, baseline.inferences))
                harm = .higherIsWorse
            case "crashes":
                pair = summaries({ try adjusted($0.clients, $0.crashClients) }, baseline, counts)
                shown = (rate(counts.crashClients, counts.clients), rate(baseline.crashClients, baseline.clients))
                harm = .higherIsWorse
            case "latency_p90_ms":
                pair = summaries({ try MetricSummary(quantile: 0.9, of: $0.latency) }, baseline, counts)
                harm = .higherIsWorse
            default:
                pair = (baseGoal, goal)
                harm = .lowerIsWorse
            }
            guard let (base, mine) = pair else { continue }
            let worse =
                (try? SequentialComparison.isWorse(
                    baseline: base, variant: mine, harm: harm, margin: margin, alpha: alpha)) ?? false
            let (value, baselineValue) = shown ?? (mine.mean, base.mean)
            arm.guardrails.append(
                HubExperimentAnalysis.Guardrail(
                    metric: name, margin: margin, value: value, baselineValue: baselineValue, tripped: worse))
        }
    }

    /// One metric of the baseline and of the variant, or `nil` when either cannot be made.
    static func summaries(
        _ make: (ExperimentArmCounts) throws -> MetricSummary, _ baseline: ExperimentArmCounts,
        _ variant: ExperimentArmCounts
    ) -> (MetricSummary, MetricSummary)? {
        guard let base = try? make(baseline), let mine = try? make(variant) else { return nil }
        return (base, mine)
    }

    /// A failure or crash rate for a guardrail's test, with Agresti and Caffo's adjustment (one
    /// success and one failure added to each arm): a baseline that never failed has a variance
    /// of 0, and the test would never find a variant that fails half the time worse.
    static func adjusted(_ units: Int, _ conversions: Int) throws -> MetricSummary {
        guard units > 0, units < Int.max - 2 else { return try MetricSummary(users: units, conversions: conversions) }
        return try MetricSummary(users: units + 2, conversions: conversions + 1)
    }

    static func rate(_ part: Int, _ whole: Int) -> Double { whole > 0 ? Double(part) / Double(whole) : 0 }

    /// A guardrail's trip in words, with its figures, for the histories.
    static func describe(
        _ trip: (arm: HubExperimentAnalysis.Arm, guardrail: HubExperimentAnalysis.Guardrail), experiment: HubExperiment
    ) -> String {
        let (arm, rail) = trip
        return
            "guardrail \(rail.metric) tripped: version \(arm.version) (arm \(arm.arm)) \(format(rail.value)) against "
            + "the baseline's \(format(rail.baselineValue)), worse by more than \(format(rail.margin)) at "
            + "\(format((1 - experiment.alpha) * 100))% confidence (clients \(arm.clients), events \(arm.events), "
            + "inferences \(arm.inferences)); back to version \(experiment.baseline)"
    }

    /// A figure in at most 4 significant digits.
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        let rounded = (value * 10_000).rounded() / 10_000
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int(rounded)) : String(rounded)
    }
}
