package import NetRunner

/// The figures of a ``StreamSession``: frames decoded, received, inferred and dropped (and
/// why), rates, latencies; `netrunner stream` prints it as text, or with `--json` as
/// `{"summary": ...}` in these keys.
///
/// Seconds and milliseconds are rounded to a microsecond (3 decimals), rates to 0.1 frame/s.
package struct StreamSummary: Encodable, Sendable {
    /// The source, as named (credentials masked).
    package var source: String
    /// The model's name.
    package var model: String
    /// `video` or `live`.
    package var mode: String
    /// Frames ffmpeg decoded.
    package var decoded: Int
    /// Frames that reached the process.
    package var received: Int
    /// Frames `--every N` left out.
    package var skippedByEvery: Int
    /// Frames answered.
    package var inferred: Int
    /// Frames the model failed on.
    package var failed: Int
    /// Live mode: frames that came while the model was busy.
    package var droppedWhileBusy: Int
    /// Live mode: frames that came before `--interval` had passed.
    package var droppedByInterval: Int
    /// Live mode: frames that came while the output was behind.
    package var droppedWhileOutputBehind: Int
    /// Answers inferred but not handed to the output (an interruption leaves some).
    package var notPrinted: Int
    /// Reconnections of a live source.
    package var reconnections: Int
    /// Timestamps that were missing, repeated or backward, replaced.
    package var repairedTimestamps: Int
    /// The run's length in seconds.
    package var seconds: Double
    /// Frames received per second.
    package var receivedPerSecond: Double
    /// Frames inferred per second.
    package var inferredPerSecond: Double
    /// Frames per second after the first frame (start-up left out).
    package var steadyPerSecond: Double?
    /// The inference latency.
    package var inferenceMilliseconds: LatencySummary?
    /// From a frame's arrival to its answer.
    package var delayMilliseconds: LatencySummary?
    /// What stopped the run early.
    package var error: String?

    /// Decimals of seconds and milliseconds in the summary (a microsecond: finer is noise).
    static let millisecondDecimals = 3
    /// Decimals of frames per second in the summary.
    static let rateDecimals = 1

    /// `value` rounded to `decimals` places, so that JSON prints it as short as the text summary.
    static func round(_ value: Double, _ decimals: Int) -> Double {
        guard value.isFinite else { return value }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return (value * scale).rounded() / scale
    }

    /// A latency summary with every figure in milliseconds rounded to ``millisecondDecimals``.
    static func round(_ summary: LatencySummary) -> LatencySummary {
        var rounded = summary
        for keyPath in [
            \LatencySummary.totalMilliseconds, \.mean, \.standardDeviation, \.min, \.median, \.p90, \.p99, \.max,
        ] as [WritableKeyPath<LatencySummary, Double>] {
            rounded[keyPath: keyPath] = round(summary[keyPath: keyPath], millisecondDecimals)
        }
        return rounded
    }

    enum CodingKeys: String, CodingKey {
        case source, model, mode, decoded, received, inferred, failed, reconnections, seconds, error
        case skippedByEvery = "skipped_by_every"
        case droppedWhileBusy = "dropped_while_busy"
        case droppedByInterval = "dropped_by_interval"
        case droppedWhileOutputBehind = "dropped_while_output_behind"
        case notPrinted = "not_printed"
        case repairedTimestamps = "repaired_timestamps"
        case receivedPerSecond = "received_fps"
        case inferredPerSecond = "inferred_fps"
        case steadyPerSecond = "steady_fps"
        case inferenceMilliseconds = "inference_ms"
        case delayMilliseconds = "delay_ms"
    }
}
