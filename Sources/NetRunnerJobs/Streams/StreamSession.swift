package import NetRunner
import NetRunnerImage
import NetRunnerSupport
package import NetRunnerVideo
import Synchronization

/// One run of a model over a video source, as `netrunner stream` runs it: frames from a
/// ``FrameSource`` through a ``StreamRunner``, each answer handed to a ``StreamOutput`` in
/// order, an annotated video written on the side, latencies kept in bounded memory, and a
/// ``StreamSummary`` at the end.
///
///     let session = StreamSession(source: video, modelName: model.name, runner: runner,
///                                 frames: frames, output: printer)
///     let outcome = await session.run(isInterrupted: { interruption.happened })
///     print(session.summary(of: outcome))
///
/// In live mode a frame that comes while the output is behind (stdout read slowly) is held
/// back and counted instead of inferred, so no answer is ever lost in the runner's buffer.
package final class StreamSession: Sendable {
    /// How a run ended.
    package struct Outcome: Sendable {
        /// From the start to the end.
        package var elapsed: Duration
        /// From the first frame's arrival to the last event (start-up left out).
        package var steady: Duration?
        /// Frames seen after the first.
        package var steadyFrames: Int
        /// What stopped the run early (the source, the output, the annotated video), if anything.
        package var error: (any Error)?
        /// Whether `isInterrupted` stopped it.
        package var interrupted: Bool
    }

    /// The source read.
    package let source: VideoSource
    /// The model's name, for the summary.
    package let modelName: String
    /// The runner (its mode and statistics).
    package let runner: StreamRunner
    /// The frames.
    package let frames: FrameSource
    /// Where the annotated video is written, if anywhere.
    package let annotate: String?
    /// What is kept of an answer (thresholds of the command line), before it is shown and timed.
    let shown: @Sendable (ImageAnswer) -> ImageAnswer
    let output: any StreamOutput
    /// Bounded however long the stream runs.
    private let latencies = Mutex<(inference: LatencySamples, delay: LatencySamples)>((.init(), .init()))
    /// Live mode: the events not yet taken by the loop that hands them to the output.
    let backlog = OutputBacklog(limit: StreamEvents.liveBufferLimit / 2)
    /// The answers handed to the output.
    private let delivered = Atomic<Int>(0)

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - source: The source, as named.
    ///   - modelName: The model's name.
    ///   - runner: The runner, with its pool and mode.
    ///   - frames: The source's frames.
    ///   - annotate: A video file to write the frames to with the latest answer drawn.
    ///   - shown: What is kept of each answer (default: all of it).
    ///   - output: Receives each answer and failure, in order.
    package init(
        source: VideoSource, modelName: String, runner: StreamRunner, frames: FrameSource, annotate: String? = nil,
        shown: @escaping @Sendable (ImageAnswer) -> ImageAnswer = { $0 }, output: any StreamOutput
    ) {
        self.source = source
        self.modelName = modelName
        self.runner = runner
        self.frames = frames
        self.annotate = annotate
        self.shown = shown
        self.output = output
    }

    /// What the reading loop leaves behind.
    private struct Progress: Sendable {
        var failure: (any Error)? = nil
        var seen = 0
        var firstFrame: ContinuousClock.Instant? = nil
        var lastEvent: ContinuousClock.Instant? = nil
    }

    /// Runs until the source ends, fails, or `isInterrupted` says so (checked every 50 ms, so
    /// a stop is at once even while a source sends nothing); the annotated video is finished
    /// either way, a whole file.
    ///
    /// - Parameter isInterrupted: Whether to stop (Ctrl-C).
    /// - Returns: How it ended.
    package func run(isInterrupted: @escaping @Sendable () -> Bool = { false }) async -> Outcome {
        let started = ContinuousClock.now
        let loop = Task { await readEvents(isInterrupted) }
        let watcher = Task {
            while !Task.isCancelled {
                if isInterrupted() {
                    loop.cancel()
                    return
                }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        let progress = await loop.value
        watcher.cancel()
        let steady = progress.firstFrame.flatMap { first in progress.lastEvent.map { $0 - first } }
        return Outcome(
            elapsed: .now - started, steady: steady, steadyFrames: max(0, progress.seen - 1),
            error: progress.failure, interrupted: isInterrupted())
    }

    private func readEvents(_ isInterrupted: @escaping @Sendable () -> Bool) async -> Progress {
        var progress = Progress()
        var annotation = annotate.map { AnnotatedVideo(path: $0) }
        // Live mode: frames are held back while the output is behind, so the runner's bounded
        // buffer of events never overflows and loses answers.
        let events =
            runner.mode == .video
            ? runner.events(for: frames) : runner.events(for: PacedFrames(base: frames, backlog: backlog))
        do {
            for try await event in events {
                backlog.taken()
                progress.seen += 1
                if progress.firstFrame == nil { progress.firstFrame = event.frame.receivedAt }
                progress.lastEvent = .now
                switch event {
                case .answered(let answer):
                    let kept = shown(answer.answer)
                    latencies.withLock {
                        $0.inference.add(kept.inferenceMilliseconds)
                        $0.delay.add(answer.delayMilliseconds)
                    }
                    try output.answered(FrameAnswer(frame: answer.frame, answer: kept, answeredAt: answer.answeredAt))
                    delivered.add(1, ordering: .relaxed)
                    try await annotation?.add(answer.frame, answer: kept)
                case .dropped(let frame, _):
                    try await annotation?.add(frame, answer: nil)
                case .failed(let frame, let problem):
                    try output.failed(frame, problem: "\(problem)")
                    try await annotation?.add(frame, answer: nil)
                }
                if isInterrupted() || Task.isCancelled { break }
            }
        } catch {
            if !isInterrupted() && !(error is CancellationError) { progress.failure = error }
        }
        do {
            // Finished outside the loop's cancellation: the encoder must write the file's end.
            try await Task.detached { [annotation] in
                var annotation = annotation
                try await annotation?.finish()
            }.value
        } catch {
            progress.failure = progress.failure ?? error
        }
        return progress
    }

    /// The run's figures, rounded as shown.
    ///
    /// - Parameter outcome: How the run ended.
    /// - Returns: The summary.
    package func summary(of outcome: Outcome) -> StreamSummary {
        let stream = runner.statistics
        let counts = frames.statistics
        let seconds = max(outcome.elapsed.inMilliseconds / 1000, 1e-9)
        let steadySeconds = outcome.steady.map { $0.inMilliseconds / 1000 } ?? 0
        let steadyRate = steadySeconds > 0 ? Double(outcome.steadyFrames) / steadySeconds : nil
        let (inference, delay) = latencies.withLock { ($0.inference.summary, $0.delay.summary) }
        return StreamSummary(
            source: source.description, model: modelName, mode: runner.mode == .video ? "video" : "live",
            decoded: counts.decoded, received: counts.received, skippedByEvery: counts.skippedByEvery,
            inferred: stream.inferred, failed: stream.failed, droppedWhileBusy: stream.droppedWhileBusy,
            droppedByInterval: stream.droppedByInterval, droppedWhileOutputBehind: backlog.heldBack,
            // Answers inferred but never handed over (an interruption leaves some): said, never silent.
            notPrinted: max(0, stream.inferred - delivered.load(ordering: .relaxed)),
            reconnections: counts.reconnections, repairedTimestamps: counts.repairedTimestamps,
            seconds: StreamSummary.round(seconds, StreamSummary.millisecondDecimals),
            receivedPerSecond: StreamSummary.round(Double(counts.received) / seconds, StreamSummary.rateDecimals),
            inferredPerSecond: StreamSummary.round(Double(stream.inferred) / seconds, StreamSummary.rateDecimals),
            steadyPerSecond: steadyRate.map { StreamSummary.round($0, StreamSummary.rateDecimals) },
            inferenceMilliseconds: inference.map(StreamSummary.round),
            delayMilliseconds: delay.map(StreamSummary.round),
            error: outcome.error.map { "\($0)" })
    }
}
