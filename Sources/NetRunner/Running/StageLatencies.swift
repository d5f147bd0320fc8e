import NetRunnerSupport

/// Latency per stage of a run's answers, in milliseconds: decoding, preprocessing (Net Runner's
/// `preprocessor_latency`), inference (`inference_latency`) and the three together.
///
/// The one summary `bulk`, `evaluate`, an album run of `serve` (`GET /v1/runs/{id}`) and a
/// stream report, made by ``StageLatencySamples``.
public struct StageLatencies: Codable, Equatable, Sendable {
    /// Decoding the file.
    public var decode: LatencySummary?
    /// Cropping, resizing and filling the input.
    public var preprocess: LatencySummary?
    /// The runtime, reading the outputs and post-processing.
    public var inference: LatencySummary?
    /// All three.
    public var total: LatencySummary?

    /// Creates a summary.
    ///
    /// - Parameters:
    ///   - decode: Decoding.
    ///   - preprocess: Preprocessing.
    ///   - inference: Inference.
    ///   - total: All three.
    public init(
        decode: LatencySummary? = nil, preprocess: LatencySummary? = nil, inference: LatencySummary? = nil,
        total: LatencySummary? = nil
    ) {
        self.decode = decode
        self.preprocess = preprocess
        self.inference = inference
        self.total = total
    }

    /// The stages in order, each with its name as a summary line writes it (`decode`,
    /// `preprocess`, `inference`, `total`).
    public var stages: [(name: String, summary: LatencySummary?)] {
        [("decode", decode), ("preprocess", preprocess), ("inference", inference), ("total", total)]
    }
}

extension LatencySummary {
    /// The summary as one line of text: `mean 1.23, median 1.20, p90 1.50, p99 1.90, max 2.10`
    /// (milliseconds, two decimals), as `bulk` and `evaluate` print it.
    public var text: String {
        [("mean", mean), ("median", median), ("p90", p90), ("p99", p99), ("max", max)]
            .map { "\($0.0) \(fixedDecimals($0.1, 2))" }.joined(separator: ", ")
    }
}
