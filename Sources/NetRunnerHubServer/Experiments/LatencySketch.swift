#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mergeable quantile sketch of non-negative values (latencies in milliseconds): DDSketch
/// (Masson, Rim and Lee, VLDB 2019), log-bucketed so that every quantile it answers is within
/// `relativeAccuracy` (1%) of the exact one, in at most `maximumBins` buckets.
///
/// A value x > 0 goes to bucket ⌈log_γ x⌉ with γ = (1 + a)/(1 − a); the bucket answers
/// 2γⁱ/(γ + 1), within a of every value in it. Values below `smallest` (1e-9) count as 0.
/// The buckets are one dense run; when the run would pass `maximumBins` the lowest buckets
/// fold into the lowest one kept (DDSketch's collapsing-lowest store), so the high quantiles a
/// latency guardrail reads (p90, p99) stay within the accuracy and the size stays bounded. The
/// state after a set of values does not depend on their order, so a merge of two sketches
/// equals the sketch of all their values.
///
/// Bad values never trap: NaN, infinities and negative values are not added; `add` returns
/// false and `rejected` counts them. The sketch is `Codable` (kept in the hub's database as
/// JSON) and decoding checks every field, so a tampered row throws instead of trapping.
package struct LatencySketch: Sendable, Equatable, Codable {
    /// Values below this count as zero.
    package static let smallest = 1e-9

    /// The relative accuracy a of every quantile (0.01).
    package let relativeAccuracy: Double
    /// The most buckets kept.
    package let maximumBins: Int
    /// The values added, zeros included, rejected ones not.
    package private(set) var count: Int = 0
    /// The values below `smallest`.
    package private(set) var zeroCount: Int = 0
    /// The values refused: NaN, infinite or negative.
    package private(set) var rejected: Int = 0
    /// The bucket index of `bins[0]`.
    private var offset: Int = 0
    /// The counts of the buckets `offset`, `offset + 1`, ...
    private var bins: [Int] = []
    /// ln γ.
    private let logGamma: Double

    /// An empty sketch.
    ///
    /// - Parameters:
    ///   - relativeAccuracy: a, in [0.0001, 0.5]; 0.01 by default.
    ///   - maximumBins: the most buckets, 16 to 65,536; 2,048 by default (at 1%, a range of
    ///     values of 10¹⁷ before any fold).
    /// - Throws: `ExperimentStatisticsError.outOfRange` for either outside its range.
    package init(relativeAccuracy: Double = 0.01, maximumBins: Int = 2_048) throws {
        guard relativeAccuracy.isFinite, relativeAccuracy >= 1e-4, relativeAccuracy <= 0.5 else {
            throw ExperimentStatisticsError.outOfRange(
                field: "relative accuracy", expected: "in [0.0001, 0.5]", found: relativeAccuracy)
        }
        guard (16...65_536).contains(maximumBins) else {
            throw ExperimentStatisticsError.outOfRange(
                field: "maximum bins", expected: "16 to 65536", found: Double(maximumBins))
        }
        self.relativeAccuracy = relativeAccuracy
        self.maximumBins = maximumBins
        logGamma = log((1 + relativeAccuracy) / (1 - relativeAccuracy))
    }

    /// The buckets in use (at most `maximumBins`).
    package var binCount: Int { bins.count }

    /// Adds `value`, `times` times; refuses NaN, infinities, negative values and a count that
    /// would overflow (counted in `rejected`, except an overflowing count or `times` below 1).
    ///
    /// - Returns: whether the value was added.
    /// - Complexity: O(1) amortised; O(`maximumBins`) when the run of buckets moves.
    @discardableResult
    package mutating func add(_ value: Double, times: Int = 1) -> Bool {
        guard times > 0 else { return false }
        guard value.isFinite, value >= 0 else {
            rejected = rejected.addingReportingOverflow(times).overflow ? Int.max : rejected + times
            return false
        }
        let (total, overflow) = count.addingReportingOverflow(times)
        guard !overflow else { return false }
        count = total
        if value < Self.smallest {
            zeroCount += times
        } else {
            // Finite values ≥ 1e-9 give indices of a few tens of thousands: no overflow.
            insert(times, at: Int(ceil(log(value) / logGamma)))
        }
        return true
    }

    /// Adds every value and count of `other` to this sketch.
    ///
    /// - Throws: `ExperimentStatisticsError.incompatibleSketches` for another accuracy or size,
    ///   `.countOverflow` when the counts would overflow (this sketch is then unchanged).
    package mutating func merge(_ other: LatencySketch) throws {
        guard other.relativeAccuracy == relativeAccuracy, other.maximumBins == maximumBins else {
            throw ExperimentStatisticsError.incompatibleSketches(
                "sketches of accuracy \(relativeAccuracy) and \(other.relativeAccuracy), "
                    + "\(maximumBins) and \(other.maximumBins) bins cannot be merged")
        }
        let (total, overflow) = count.addingReportingOverflow(other.count)
        let (rejectedTotal, rejectedOverflow) = rejected.addingReportingOverflow(other.rejected)
        guard !overflow, !rejectedOverflow else { throw ExperimentStatisticsError.countOverflow }
        count = total
        rejected = rejectedTotal
        zeroCount += other.zeroCount
        for (position, times) in other.bins.enumerated() where times > 0 {
            insert(times, at: other.offset + position)
        }
    }

    /// The value at quantile `q` (0.5: the median, 0.9: p90) of the values added: within
    /// `relativeAccuracy` of the value of rank ⌊q·(count − 1)⌋ (0-based) among them sorted,
    /// unless that value was folded away (it is then at most the lowest bucket kept).
    ///
    /// - Returns: nil when the sketch is empty or `q` is outside [0, 1].
    /// - Complexity: O(`binCount`).
    package func quantile(_ q: Double) -> Double? {
        guard count > 0, q >= 0, q <= 1 else { return nil }
        let rank = Int((q * Double(count - 1)).rounded(.down))
        if rank < zeroCount { return 0 }
        var seen = zeroCount
        for (position, times) in bins.enumerated() {
            seen += times
            if seen > rank {
                return value(ofBucket: offset + position)
            }
        }
        // Not reached: the buckets hold count − zeroCount values.
        return bins.isEmpty ? 0 : value(ofBucket: offset + bins.count - 1)
    }

    /// 2γⁱ/(γ + 1), in logarithms so that the top bucket does not overflow, at most the largest
    /// finite value.
    private func value(ofBucket index: Int) -> Double {
        min(exp(Double(index) * logGamma + log(2) - log1p(exp(logGamma))), .greatestFiniteMagnitude)
    }

    /// Adds `times` to bucket `index`, moving and folding the run of buckets as needed.
    private mutating func insert(_ times: Int, at index: Int) {
        if bins.isEmpty {
            offset = index
            bins = [times]
            return
        }
        let high = offset + bins.count - 1
        if index > high {
            let newLow = max(offset, index - maximumBins + 1)
            if newLow > high {
                let folded = bins.reduce(0, +)
                bins = [Int](repeating: 0, count: index - newLow + 1)
                bins[0] = folded
            } else {
                let folded = bins[..<(newLow - offset)].reduce(0, +)
                bins.removeFirst(newLow - offset)
                if !bins.isEmpty { bins[0] += folded }
                bins.append(contentsOf: [Int](repeating: 0, count: index - high))
            }
            offset = newLow
            bins[index - newLow] += times
        } else if index < offset {
            let newLow = max(index, high - maximumBins + 1)
            if newLow < offset {
                bins.insert(contentsOf: [Int](repeating: 0, count: offset - newLow), at: 0)
                offset = newLow
            }
            bins[max(index, newLow) - offset] += times
        } else {
            bins[index - offset] += times
        }
    }

    private enum CodingKeys: String, CodingKey {
        case relativeAccuracy = "relative_accuracy"
        case maximumBins = "maximum_bins"
        case count, rejected
        case zeroCount = "zero_count"
        case offset, bins
    }

    /// Reads a sketch written by `encode(to:)`, checking every field.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for a field out of range or counts that do not add up.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        do {
            try self.init(
                relativeAccuracy: try container.decode(Double.self, forKey: .relativeAccuracy),
                maximumBins: try container.decode(Int.self, forKey: .maximumBins))
        } catch let error as ExperimentStatisticsError {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(error)"))
        }
        let counts = (
            count: try container.decode(Int.self, forKey: .count),
            zeros: try container.decode(Int.self, forKey: .zeroCount),
            rejected: try container.decode(Int.self, forKey: .rejected)
        )
        let offset = try container.decode(Int.self, forKey: .offset)
        let bins = try container.decode([Int].self, forKey: .bins)
        var sum = counts.zeros
        var valid =
            bins.count <= maximumBins && (-10_000_000...10_000_000).contains(offset) && counts.rejected >= 0
            && counts.zeros >= 0
        for times in bins where valid {
            let (next, overflow) = sum.addingReportingOverflow(times)
            valid = times >= 0 && !overflow
            sum = next
        }
        guard valid, sum == counts.count else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "the sketch's counts are out of range"))
        }
        count = counts.count
        zeroCount = counts.zeros
        rejected = counts.rejected
        self.offset = bins.isEmpty ? 0 : offset
        self.bins = bins
    }

    /// Writes the sketch's settings, counts and buckets (`offset`: the index of `bins[0]`).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(relativeAccuracy, forKey: .relativeAccuracy)
        try container.encode(maximumBins, forKey: .maximumBins)
        try container.encode(count, forKey: .count)
        try container.encode(zeroCount, forKey: .zeroCount)
        try container.encode(rejected, forKey: .rejected)
        try container.encode(offset, forKey: .offset)
        try container.encode(bins, forKey: .bins)
    }
}
