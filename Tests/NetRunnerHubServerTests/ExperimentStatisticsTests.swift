import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerHubServer

/// The statistics of the hub's experiments (issue 56): the figures equal GrowthBook's stats
/// engine (gbstats 0.8.0, run live in `.venv-stats`) within 0.01; the sequential rule keeps
/// its false positives at 5% when looked at after every batch, and finds a 50% → 55% change
/// with 80% power at the sample size its documentation states (seeded simulations); the
/// latency sketch is within its accuracy, mergeable, and bounded; bad counts throw.
@Suite("Experiment statistics: gbstats' figures, an always-valid rule, a latency sketch")
struct ExperimentStatisticsTests {
    /// One case for gbstats: the kind and both arms' figures as the script takes them.
    struct Case {
        var kind: String
        var a: [Double]
        var b: [Double]
        var inverse = false
        var level: Double?
        /// The sequential test's null difference, when it runs too.
        var testValue: Double?
    }

    /// The Swift figures of one case, in gbstats' result's shape.
    static func swiftFigures(_ item: Case) throws -> (BayesianComparison, SequentialComparison?) {
        func summary(_ figures: [Double]) throws -> MetricSummary {
            switch item.kind {
            case "binomial": try MetricSummary(users: Int(figures[0]), conversions: Int(figures[1]))
            case "mean": try MetricSummary(count: Int(figures[0]), sum: figures[1], sumOfSquares: figures[2])
            default:
                try Self.quantileSummary(figures, level: item.level ?? 0.9)
            }
        }
        let (a, b) = (try summary(item.a), try summary(item.b))
        let bayes = try BayesianComparison(baseline: a, variant: b, inverse: item.inverse)
        let sequential = try item.testValue.map {
            try SequentialComparison(baseline: a, variant: b, nullDifference: $0)
        }
        return (bayes, sequential)
    }

    /// A quantile's summary from the figures gbstats is given: n, estimate, lower, upper.
    static func quantileSummary(_ figures: [Double], level: Double) throws -> MetricSummary {
        try MetricSummary(
            quantileCount: Int(figures[0]), level: level, estimate: figures[1], lower: figures[2], upper: figures[3])
    }

    @Test("Chance to beat, expected lift, credible interval, risk and the sequential p-value equal gbstats 0.8.0's")
    func equalsGBStats() throws {
        let python = Fixtures.path(".venv-stats/bin/python")
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "no \(python): run `make test-python` (scripts/setup-stats-python.sh installs gbstats 0.8.0)")
        var cases: [Case] = [
            Case(kind: "binomial", a: [1000, 100], b: [1000, 120], testValue: 0),
            Case(kind: "binomial", a: [1000, 120], b: [1000, 100], testValue: 0),
            Case(kind: "binomial", a: [20, 3], b: [25, 7], testValue: 0),
            Case(kind: "binomial", a: [2, 1], b: [3, 2], testValue: 0),
            Case(kind: "binomial", a: [5, 1], b: [4, 0], testValue: 0),
            Case(kind: "binomial", a: [0, 0], b: [10, 2], testValue: 0),
            Case(kind: "binomial", a: [50_000, 1_000], b: [50_000, 1_150], inverse: true, testValue: 0.001),
            Case(kind: "binomial", a: [4_000, 2_000], b: [4_000, 2_200], testValue: 0),
            Case(kind: "binomial", a: [10_000_000, 5_000_000], b: [10_000_000, 5_004_000], testValue: 0),
            Case(kind: "binomial", a: [300, 90], b: [280, 70], inverse: true, testValue: -0.01),
            Case(kind: "mean", a: [100, 50, 40], b: [100, 60, 50], testValue: 0),
            Case(kind: "mean", a: [2_000, 1_500, 1_400], b: [2_100, 1_470, 1_300], testValue: 0),
            Case(kind: "mean", a: [1, 5, 25], b: [10, 20, 60], testValue: 0),
        ]
        // Latency p90 of two seeded lognormal samples, the variant's 10% slower.
        var random = SplitMix64(seed: 56)
        var sketches = [try LatencySketch(), try LatencySketch()]
        for _ in 0..<5_000 {
            sketches[0].add(random.logNormal(mu: 3, sigma: 0.5))
            sketches[1].add(1.1 * random.logNormal(mu: 3, sigma: 0.5))
        }
        let quantiles = try sketches.map { sketch in
            let summary = try MetricSummary(quantile: 0.9, of: sketch)
            let n = Double(sketch.count)
            let spread = 1.959_963_984_540_054 * (0.9 * 0.1 / n).squareRoot()
            let figures = [
                n, try #require(sketch.quantile(0.9)), try #require(sketch.quantile(0.9 - spread)),
                try #require(sketch.quantile(0.9 + spread)),
            ]
            #expect(try Self.quantileSummary(figures, level: 0.9) == summary)
            return figures
        }
        cases.append(Case(kind: "quantile", a: quantiles[0], b: quantiles[1], inverse: true, level: 0.9))
        let payload = cases.map { item -> [String: Any] in
            var entry: [String: Any] = ["kind": item.kind, "a": item.a, "b": item.b, "inverse": item.inverse]
            if let level = item.level { entry["nu"] = level }
            if let testValue = item.testValue { entry["sequential"] = ["tuning": 5_000, "test_value": testValue] }
            return entry
        }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: payload), as: UTF8.self)
        let run = try ProcessResult.run(python, [Fixtures.path("tools/experiments/gbstats_reference.py"), json])
        try #require(run.status == 0, "\(run.stderr.suffix(2000))")
        let answers = try #require(
            try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        try #require(answers.count == cases.count)
        var largest = 0.0
        for (item, answer) in zip(cases, answers) {
            let (bayes, sequential) = try Self.swiftFigures(item)
            func close(_ name: String, _ mine: Double, _ theirs: Any?) {
                let value = (theirs as? Double) ?? .nan
                largest = max(largest, abs(mine - value))
                #expect(
                    abs(mine - value) <= 0.01, "\(item.kind) \(item.a) vs \(item.b): \(name) \(mine), gbstats \(value)")
            }
            let ci = answer["ci"] as? [Double] ?? []
            let risk = answer["risk"] as? [Double] ?? []
            #expect((answer["error"] is NSNull) == (bayes.status == .computed), "\(item.a) vs \(item.b): \(answer)")
            close("chance to win", bayes.chanceToBeatBaseline, answer["chance_to_win"])
            close("expected", bayes.expectedChange, answer["expected"])
            close("ci lower", bayes.lower, ci.first)
            close("ci upper", bayes.upper, ci.last)
            close("risk of the baseline", bayes.riskOfBaseline, risk.first)
            close("risk of the variant", bayes.riskOfVariant, risk.last)
            if let sequential {
                let interval = answer["sequential_ci"] as? [Double] ?? []
                close("p-value", sequential.pValue, answer["p_value"])
                close("difference", sequential.difference, answer["sequential_expected"])
                close("sequence lower", sequential.lower, interval.first)
                close("sequence upper", sequential.upper, interval.last)
            }
        }
        print("experiment statistics: \(cases.count) cases against gbstats 0.8.0, largest difference \(largest)")
    }

    @Test("The normal distribution's functions: known values, Φ⁻¹(Φ(x)) = x, tails without 0/0")
    func normalDistribution() {
        #expect(abs(NormalDistribution.cdf(1.959_963_984_540_054) - 0.975) < 1e-15)
        #expect(abs(NormalDistribution.quantile(0.975) - 1.959_963_984_540_054) < 1e-13)
        #expect(abs(NormalDistribution.quantile(0.5)) < 1e-15)
        // Above 3, Φ(x)'s rounding to a double, not the quantile, limits a round trip.
        for x in stride(from: -37.0, through: 3, by: 0.25) {
            let back = NormalDistribution.quantile(NormalDistribution.cdf(x))
            #expect(abs(back - x) <= 1e-9 * max(1, abs(x)), "x \(x) → \(back)")
        }
        #expect(abs(NormalDistribution.quantile(0.999_999) + NormalDistribution.quantile(0.000_001)) < 1e-9)
        #expect(NormalDistribution.quantile(0) == -.infinity && NormalDistribution.quantile(1) == .infinity)
        #expect(NormalDistribution.quantile(-0.1).isNaN && NormalDistribution.quantile(.nan).isNaN)
        #expect(NormalDistribution.survival(37) > 0 && NormalDistribution.survival(37) < 1e-290)
        #expect(NormalDistribution.expectedPositivePart(mean: -50, standardDeviation: 1) == 0)
        #expect(abs(NormalDistribution.expectedPositivePart(mean: 0, standardDeviation: 1) - 0.398_942_28) < 1e-8)
    }

    @Test("Counts from outside are checked: no users, conversions above users, huge counts, NaN sums")
    func checkedInputs() throws {
        #expect(throws: ExperimentStatisticsError.conversionsExceedUsers(conversions: 11, users: 10)) {
            try MetricSummary(users: 10, conversions: 11)
        }
        #expect(throws: ExperimentStatisticsError.negativeCount(field: "users", value: -1)) {
            try MetricSummary(users: -1, conversions: 0)
        }
        #expect(throws: ExperimentStatisticsError.negativeCount(field: "conversions", value: -3)) {
            try MetricSummary(users: 5, conversions: -3)
        }
        #expect(throws: ExperimentStatisticsError.notFinite(field: "sum")) {
            try MetricSummary(count: 3, sum: .nan, sumOfSquares: 1)
        }
        #expect(throws: ExperimentStatisticsError.self) { try MetricSummary(count: 3, sum: 1, sumOfSquares: -1) }
        #expect(throws: ExperimentStatisticsError.self) { try MetricSummary(count: 0, sum: 1, sumOfSquares: 1) }
        let none = try MetricSummary(users: 0, conversions: 0)
        let some = try MetricSummary(users: 100, conversions: 10)
        #expect(try BayesianComparison(baseline: some, variant: none).status == .noUnits)
        #expect(try BayesianComparison(baseline: none, variant: some).status == .baselineZero)
        #expect(try SequentialComparison(baseline: some, variant: none).decision == .continue)
        let huge = try MetricSummary(users: .max, conversions: .max / 2)
        let hugeToo = try MetricSummary(users: .max, conversions: .max / 2 + .max / 100)
        let comparison = try BayesianComparison(baseline: huge, variant: hugeToo)
        #expect(comparison.status == .computed && comparison.chanceToBeatBaseline.isFinite)
        #expect(try SequentialComparison(baseline: huge, variant: hugeToo).decision == .winner)
        let overflowing = try MetricSummary(count: 2, sum: 1e300, sumOfSquares: 1e300)
        #expect(overflowing.hasZeroVariance)
        #expect(throws: ExperimentStatisticsError.self) {
            try BayesianComparison(baseline: some, variant: some, alpha: 0)
        }
        #expect(throws: ExperimentStatisticsError.self) {
            try SequentialComparison(baseline: some, variant: some, tuning: .nan)
        }
        #expect(throws: ExperimentStatisticsError.self) {
            try SequentialComparison.isWorse(baseline: some, variant: some, harm: .higherIsWorse, margin: -1)
        }
        #expect(throws: ExperimentStatisticsError.self) { try MetricSummary(quantile: 1, of: LatencySketch()) }
    }
}

extension ExperimentStatisticsTests {
    /// Binomial(n, p) draws by inversion of a table of the distribution function: one uniform
    /// per draw, so 500 experiments of 100 looks each cost little in a debug build.
    struct BinomialDraw {
        let cumulative: [Double]

        init(trials: Int, probability p: Double) {
            var pmf = pow(1 - p, Double(trials))
            var sum = pmf
            var table = [sum]
            for k in 0..<trials {
                pmf *= Double(trials - k) / Double(k + 1) * p / (1 - p)
                sum += pmf
                table.append(sum)
            }
            cumulative = table
        }

        func draw(_ random: inout SplitMix64) -> Int {
            let u = random.uniform() * (cumulative.last ?? 1)
            var (low, high) = (0, cumulative.count - 1)
            while low < high {
                let middle = (low + high) / 2
                if cumulative[middle] > u { high = middle } else { low = middle + 1 }
            }
            return low
        }
    }

    /// The outcome of simulated experiments looked at after every batch.
    struct Looks {
        /// The experiments in which the rule stopped (any decision, or the watched one).
        var stopped = 0
        /// The users per arm at each stop.
        var stops: [Int] = []
        /// The experiments in which a Bayesian chance to beat of 95% (either side) was seen.
        var bayesianCrossed = 0

        var medianStop: Int { stops.sorted().dropFirst(stops.count / 2).first ?? 0 }
    }

    /// Simulates `experiments` experiments of rates `baseline` and `variant`, `batch` users per
    /// arm at a time up to `maximum` per arm, and applies `stop` after every batch.
    static func simulate(
        seed: UInt64, experiments: Int = 500, baseline: Double, variant: Double, batch: Int = 100, maximum: Int,
        stop: (MetricSummary, MetricSummary) throws -> Bool
    ) throws -> Looks {
        var random = SplitMix64(seed: seed)
        let (drawA, drawB) = (
            BinomialDraw(trials: batch, probability: baseline), BinomialDraw(trials: batch, probability: variant)
        )
        var looks = Looks()
        for _ in 0..<experiments {
            var (users, a, b) = (0, 0, 0)
            var crossed = false
            while users < maximum {
                users += batch
                a += drawA.draw(&random)
                b += drawB.draw(&random)
                let (arms) = (
                    try MetricSummary(users: users, conversions: a), try MetricSummary(users: users, conversions: b)
                )
                if !crossed {
                    let chance = try BayesianComparison(baseline: arms.0, variant: arms.1).chanceToBeatBaseline
                    crossed = chance > 0.95 || chance < 0.05
                }
                if try stop(arms.0, arms.1) {
                    looks.stopped += 1
                    looks.stops.append(users)
                    break
                }
            }
            if crossed { looks.bayesianCrossed += 1 }
        }
        return looks
    }

    @Test("500 A/A tests looked at every 100 users per arm up to 10,000: at most 5% declare a winner or loser")
    func falsePositivesUnderPeeking() throws {
        let looks = try Self.simulate(seed: 1, baseline: 0.5, variant: 0.5, maximum: 10_000) {
            try SequentialComparison(baseline: $0, variant: $1).decision != .continue
        }
        let rate = Double(looks.stopped) / 500
        let bayesian = Double(looks.bayesianCrossed) / 500
        print(
            "experiment statistics: A/A false positives \(rate) (\(looks.stopped) of 500, 100 looks each);"
                + " a Bayesian 95% chance to beat would have been crossed in \(bayesian)")
        #expect(rate <= 0.05)
        // Why a fixed-horizon figure is no stopping rule: peeking at it crosses far more often.
        #expect(bayesian > 0.2)
    }

    @Test("A true change from 50% to 55% is found with at least 80% power within 4,000 users per arm")
    func power() throws {
        let looks = try Self.simulate(seed: 2, baseline: 0.5, variant: 0.55, maximum: 4_000) {
            try SequentialComparison(baseline: $0, variant: $1).decision == .winner
        }
        let power = Double(looks.stopped) / 500
        print(
            "experiment statistics: 50% -> 55% found in \(power) of 500 within 4,000 users per arm,"
                + " median stop at \(looks.medianStop) users per arm")
        #expect(power >= 0.8)
    }

    @Test("A guardrail stops a variant failing twice as often early, and an equal one in at most 5%")
    func guardrail() throws {
        let worse = try Self.simulate(seed: 3, baseline: 0.02, variant: 0.04, maximum: 10_000) {
            try SequentialComparison.isWorse(baseline: $0, variant: $1, harm: .higherIsWorse)
        }
        let equal = try Self.simulate(seed: 4, baseline: 0.02, variant: 0.02, maximum: 10_000) {
            try SequentialComparison.isWorse(baseline: $0, variant: $1, harm: .higherIsWorse)
        }
        let better = try Self.simulate(seed: 5, baseline: 0.02, variant: 0.04, maximum: 10_000) {
            try SequentialComparison.isWorse(baseline: $1, variant: $0, harm: .higherIsWorse)
        }
        print(
            "experiment statistics: guardrail, failures 2% -> 4% stopped in \(Double(worse.stopped) / 500)"
                + " (median at \(worse.medianStop) users per arm); 2% = 2% stopped in \(Double(equal.stopped) / 500);"
                + " 4% -> 2% stopped in \(Double(better.stopped) / 500)")
        #expect(Double(worse.stopped) / 500 >= 0.95)
        #expect(worse.medianStop <= 5_000)
        #expect(Double(equal.stopped) / 500 <= 0.05)
        #expect(better.stopped == 0)
        // A floor on the goal: a goal that falls 50% -> 45% is worse; the other way it is not.
        let floor = try Self.simulate(seed: 6, baseline: 0.5, variant: 0.45, maximum: 4_000) {
            try SequentialComparison.isWorse(baseline: $0, variant: $1, harm: .lowerIsWorse)
        }
        print("experiment statistics: guardrail floor, goal 50% -> 45% stopped in \(Double(floor.stopped) / 500)")
        #expect(Double(floor.stopped) / 500 >= 0.8)
    }

    @Test("The sketch's quantiles are within 1% of a seeded lognormal sample's exact ones")
    func sketchAccuracy() throws {
        var random = SplitMix64(seed: 7)
        var sketch = try LatencySketch()
        var values: [Double] = []
        for _ in 0..<20_000 {
            let value = random.logNormal(mu: 3, sigma: 1)
            values.append(value)
            sketch.add(value)
        }
        values.sort()
        for q in [0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1] {
            let exact = values[Int((q * Double(values.count - 1)).rounded(.down))]
            let estimate = try #require(sketch.quantile(q))
            #expect(abs(estimate - exact) <= 0.01 * exact * (1 + 1e-12), "q \(q): \(estimate) vs \(exact)")
        }
        print("experiment statistics: sketch of 20,000 lognormal latencies in \(sketch.binCount) buckets")
        let empty = try LatencySketch()
        #expect(sketch.quantile(1.5) == nil && empty.quantile(0.5) == nil)
    }

    @Test("Two halves merged equal the sketch of the whole; JSON round trip; tampered JSON throws")
    func sketchMergeAndJSON() throws {
        var random = SplitMix64(seed: 8)
        var (whole, first, second) = (try LatencySketch(), try LatencySketch(), try LatencySketch())
        for index in 0..<10_000 {
            let value = index % 97 == 0 ? 0 : random.logNormal(mu: 2, sigma: 2)
            whole.add(value)
            if index % 2 == 0 { first.add(value) } else { second.add(value) }
        }
        try first.merge(second)
        #expect(first == whole)
        let data = try JSONEncoder().encode(whole)
        #expect(try JSONDecoder().decode(LatencySketch.self, from: data) == whole)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["count"] = 5
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(LatencySketch.self, from: try JSONSerialization.data(withJSONObject: object))
        }
        object["count"] = whole.count
        object["offset"] = Int.min
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(LatencySketch.self, from: try JSONSerialization.data(withJSONObject: object))
        }
        #expect(throws: ExperimentStatisticsError.self) { try first.merge(LatencySketch(relativeAccuracy: 0.02)) }
    }

    @Test("Extreme and bad values: bounded buckets, NaN, infinities and negatives refused, never a trap")
    func sketchBadInputs() throws {
        var sketch = try LatencySketch(maximumBins: 64)
        for value in [Double.nan, .infinity, -.infinity, -1, -Double.leastNonzeroMagnitude] {
            let added = sketch.add(value)
            #expect(!added, "\(value)")
        }
        #expect(sketch.rejected == 5 && sketch.count == 0)
        for value in [Double.leastNonzeroMagnitude, 1e-300, 1e-9, 1, 1e3, 1e300, .greatestFiniteMagnitude, 0] {
            let added = sketch.add(value)
            #expect(added, "\(value)")
        }
        #expect(sketch.binCount <= 64 && sketch.count == 8 && sketch.zeroCount == 3)
        // The top is kept within 1%; the values folded away answer the lowest bucket kept.
        let top = try #require(sketch.quantile(1))
        #expect(abs(top - .greatestFiniteMagnitude) <= 0.01 * .greatestFiniteMagnitude)
        let overflowing = sketch.add(1, times: .max)
        #expect(!overflowing)
        var other = try LatencySketch(maximumBins: 64)
        other.add(1e-5)
        other.add(5e200)
        try sketch.merge(other)
        #expect(sketch.binCount <= 64 && sketch.count == 10)
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014): a seeded generator, so the simulations are the same
/// on every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in [0, 1).
    mutating func uniform() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// A lognormal value: exp(mu + sigma·Z), Z standard normal (Box-Muller).
    mutating func logNormal(mu: Double, sigma: Double) -> Double {
        let u = 1 - uniform()
        let z = (-2 * log(u)).squareRoot() * cos(2 * Double.pi * uniform())
        return exp(mu + sigma * z)
    }
}
