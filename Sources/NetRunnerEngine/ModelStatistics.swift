import FoundationEssentials
import Synchronization

/// What the engine did with one model since the server started: Triton's statistics extension
/// (`GET /v2/models/{name}/stats`), kept per model by the workers.
///
/// Each stage has a count and its cumulative nanoseconds: `queue` is the time waiting for a
/// worker, `computeInput` decoding and preprocessing an image or copying tensors in,
/// `computeInfer` the runtime's invoke, `computeOutput` reading the outputs and
/// postprocessing; `success` and `fail` are whole requests, from the moment they were queued
/// to their answer. Warm-ups are not counted.
package struct ModelStatistics: Equatable, Sendable {
    /// A count and the nanoseconds spent, summed.
    package struct Stage: Equatable, Sendable {
        /// How many times the stage ran.
        package var count = 0
        /// Their nanoseconds, summed.
        package var nanoseconds: UInt64 = 0

        /// Creates an empty stage.
        package init() {}

        /// Adds one run of the stage.
        ///
        /// - Parameter duration: How long it took (a negative one counts as zero).
        package mutating func add(_ duration: Duration) {
            count += 1
            nanoseconds &+= ModelStatistics.nanoseconds(duration)
        }
    }

    /// When the last request finished, in milliseconds since 1970 (0: none yet).
    package var lastInference: UInt64 = 0
    /// Inferences done: one per image or tensor request that succeeded.
    package var inferenceCount = 0
    /// Runs of the model: fewer than ``inferenceCount`` when images share a dynamic batch.
    package var executionCount = 0
    /// Requests answered.
    package var success = Stage()
    /// Requests that failed (bad input, a runtime error), after they were queued.
    package var fail = Stage()
    /// Waiting for a worker.
    package var queue = Stage()
    /// Decoding and preprocessing, or copying tensors in.
    package var computeInput = Stage()
    /// The runtime's invoke.
    package var computeInfer = Stage()
    /// Reading outputs and postprocessing.
    package var computeOutput = Stage()

    /// Creates empty statistics.
    package init() {}

    /// A duration in whole nanoseconds, zero if negative.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }

    /// A number of milliseconds as a duration.
    static func milliseconds(_ value: Double) -> Duration {
        .nanoseconds(Int64(max(0, value) * 1_000_000))
    }

    /// Now, in milliseconds since 1970.
    static func nowMilliseconds() -> UInt64 {
        UInt64(max(0, Date().timeIntervalSince1970 * 1000))
    }
}

/// The engine's statistics of every model, shared by the workers.
final class StatisticsStore: Sendable {
    private let byModel = Mutex<[String: ModelStatistics]>([:])

    /// A model's statistics (empty for one without requests).
    func statistics(of id: String) -> ModelStatistics { byModel.withLock { $0[id] } ?? ModelStatistics() }

    /// Changes a model's statistics.
    func update(_ id: String, _ change: (inout ModelStatistics) -> Void) {
        byModel.withLock { change(&$0[id, default: ModelStatistics()]) }
    }

    /// Records a request's end: its outcome and its time since it was queued.
    func finish(_ id: String, succeeded: Bool, since enqueued: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - enqueued
        let now = ModelStatistics.nowMilliseconds()
        update(id) { statistics in
            if succeeded {
                statistics.success.add(elapsed)
                statistics.inferenceCount += 1
            } else {
                statistics.fail.add(elapsed)
            }
            statistics.lastInference = now
        }
    }
}
