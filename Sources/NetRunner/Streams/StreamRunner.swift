public import NetRunnerImage
import Synchronization

/// Runs a vision task on a stream of frames in MediaPipe's video or live-stream mode.
///
///     let pool = try VisionTaskPool(count: 1) { try ImageTask(modelAt: "face.tflite") }
///     let runner = StreamRunner(pool: pool, mode: .liveStream(minimumInterval: .milliseconds(200)))
///     for try await event in runner.events(for: frames) {
///         if case .answered(let answer) = event { print(answer.frame.timestampMilliseconds, answer.answer) }
///     }
///     print(runner.statistics.droppedWhileBusy)
///
/// Several runners (several streams) can share one ``VisionTaskPool``, or any
/// ``AsyncVisionTask`` (a server's engine). Memory stays bounded
/// however fast the source and however slow the reader: in video mode the runner reads the next
/// frame only when the reader has nearly caught up (so the source waits); in live mode at most one
/// frame per stream is with the model, and a reader more than
/// ``StreamEvents/liveBufferLimit`` events behind loses the oldest.
public final class StreamRunner: Sendable {
    /// What the frames run on.
    public let task: any AsyncVisionTask
    /// The running mode.
    public let mode: RunningMode
    private let counters = Mutex(StreamStatistics())

    /// Creates a runner on a pool of interpreters.
    ///
    /// - Parameters:
    ///   - pool: The interpreters the stream runs on.
    ///   - mode: Video (every frame, in order) or live stream (latest frame wins).
    public convenience init(pool: VisionTaskPool, mode: RunningMode) {
        self.init(task: pool, mode: mode)
    }

    /// Creates a runner on any asynchronous task.
    ///
    /// - Parameters:
    ///   - task: What the frames run on.
    ///   - mode: Video (every frame, in order) or live stream (latest frame wins).
    public init(task: any AsyncVisionTask, mode: RunningMode) {
        self.task = task
        self.mode = mode
    }

    /// What the run did so far.
    public var statistics: StreamStatistics { counters.withLock { $0 } }

    /// Runs the model on the frames: one event per frame.
    ///
    /// In video mode the events come in the frames' order, in live mode as answers are ready. The stream ends with the frames, or with their error;
    /// stopping to read it stops reading the frames.
    ///
    /// - Parameter frames: The frames (a `NetRunnerVideo.FrameSource`, say).
    /// - Returns: The events.
    public func events<Frames: AsyncSequence & Sendable>(for frames: Frames) -> StreamEvents
    where Frames.Element == VideoFrame {
        let policy: AsyncThrowingStream<StreamEvent, any Error>.Continuation.BufferingPolicy =
            mode == .video ? .unbounded : .bufferingNewest(StreamEvents.liveBufferLimit)
        let (stream, continuation) = AsyncThrowingStream<StreamEvent, any Error>.makeStream(bufferingPolicy: policy)
        let credits = StreamEvents.Credits(StreamEvents.videoReadAhead)
        let task = Task { [self] in
            do {
                switch mode {
                case .video: try await runVideo(frames, continuation, credits: credits)
                case .liveStream(let interval): try await runLive(frames, interval: interval, continuation)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in
            task.cancel()
            credits.close()
        }
        return StreamEvents(stream: stream, credits: credits)
    }

    private func runVideo<Frames: AsyncSequence>(
        _ frames: Frames, _ continuation: AsyncThrowingStream<StreamEvent, any Error>.Continuation,
        credits: StreamEvents.Credits
    ) async throws where Frames.Element == VideoFrame {
        var iterator = frames.makeAsyncIterator()
        while true {
            // The next frame only when the reader is at most `videoReadAhead` events behind.
            await credits.take()
            try Task.checkCancellation()
            guard let frame = try await iterator.next() else { return }
            try Task.checkCancellation()
            counters.withLock { $0.received += 1 }
            continuation.yield(await infer(frame))
        }
    }

    private func runLive<Frames: AsyncSequence>(
        _ frames: Frames, interval: Duration, _ continuation: AsyncThrowingStream<StreamEvent, any Error>.Continuation
    ) async throws where Frames.Element == VideoFrame {
        let busy = BusyFlag()
        var lastStart: ContinuousClock.Instant? = nil
        // A discarding group: an answered frame's task leaves nothing behind, so a stream that
        // runs for days holds no more than the one frame with the model.
        try await withThrowingDiscardingTaskGroup { group in
            for try await frame in frames {
                try Task.checkCancellation()
                counters.withLock { $0.received += 1 }
                if let lastStart, frame.receivedAt - lastStart < interval {
                    counters.withLock { $0.droppedByInterval += 1 }
                    continuation.yield(.dropped(frame, .interval))
                    continue
                }
                guard
                    busy.value.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
                        .exchanged
                else {
                    counters.withLock { $0.droppedWhileBusy += 1 }
                    continuation.yield(.dropped(frame, .busy))
                    continue
                }
                lastStart = frame.receivedAt
                group.addTask { [self] in
                    let event = await infer(frame)
                    continuation.yield(event)
                    busy.value.store(false, ordering: .releasing)
                }
            }
        }
    }

    private func infer(_ frame: VideoFrame) async -> StreamEvent {
        do {
            let answer = try await task.run(.pixels(frame.pixels))
            counters.withLock { $0.inferred += 1 }
            return .answered(
                FrameAnswer(
                    frame: frame, answer: answer.scaled(from: frame.pixels.size, to: frame.sourceSize),
                    answeredAt: .now))
        } catch  where task.isBusy(error) {
            counters.withLock { $0.droppedWhileBusy += 1 }
            return .dropped(frame, .busy)
        } catch {
            counters.withLock { $0.failed += 1 }
            return .failed(frame, error)
        }
    }
}

/// Whether a live stream's frame is with the model.
private final class BusyFlag: Sendable {
    let value = Atomic<Bool>(false)
}
