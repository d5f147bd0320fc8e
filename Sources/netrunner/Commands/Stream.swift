import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage
import NetRunnerVideo
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension NetRunnerCommand {
    /// `netrunner stream SOURCE`: a model on every frame of a video, a URL or a camera.
    struct Stream: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a model on the frames of a video file, a live URL, a camera or stdin.",
            discussion: """
                SOURCE is a video file, an http(s)/rtsp(s)/rtmp(s)/udp/tcp/srt URL (no other protocol), a V4L2 \
                device (/dev/video0) or - for standard input; Debian's ffmpeg decodes it in a child process and \
                scales frames to what the model needs. Video mode (files, stdin, URLs of video files) runs every frame in order (--every N: every \
                Nth); live mode (cameras, other URLs) runs the latest frame whenever the model is free and \
                --interval has passed, dropping the others (and those that come while stdout's reader is behind: \
                no answer is lost), and reconnects a dropped source. One line per answered frame (--json: JSON Lines, the classify/detect --json shape plus frame, timestamp_ms and \
                delay_ms), a summary on stderr at the end (one JSON line with --json). --model also takes the \
                embedded models by name: mobilenet (the default) or face.
                """)

        @Argument(
            help: "A video file, an http(s)/rtsp(s)/rtmp(s)/udp/tcp/srt URL, a camera device, or - for standard input.")
        var source: String

        @OptionGroup var model: ModelOptions

        @OptionGroup var results: ResultOptions

        @Option(
            help:
                "video (every frame, in order) or live (latest frame wins); default: live for cameras and stream URLs.")
        var mode: ModeChoice?

        enum ModeChoice: String, ExpressibleByArgument, CaseIterable {
            case video, live
        }

        @Option(parsing: .unconditional, help: "Video mode: run every Nth frame (ffmpeg leaves the others out).")
        var every: Int?

        @Option(
            parsing: .unconditional,
            help:
                "Live mode: at least this many milliseconds between the starts of two inferences (the seeds' delayBetweenInferencesMs)."
        )
        var interval: Int?

        @Option(
            name: .customLong("fps"), parsing: .unconditional, help: "Have ffmpeg keep this many frames per second.")
        var framesPerSecond: Double?

        @Flag(help: "Read a file at its own frame rate, as a camera would deliver it (ffmpeg's -re).")
        var realtime = false

        @Option(name: .customLong("max-frames"), parsing: .unconditional, help: "Stop after this many frames.")
        var maxFrames: Int?

        @Option(
            parsing: .unconditional,
            help: "Seconds without a frame before a URL, device or pipe counts as stalled.")
        var watchdog: Double = 10

        @Option(
            parsing: .unconditional,
            help:
                "Live sources: failed reconnection attempts in a row before giving up (0: never reconnect).")
        var reconnect: Int = 8

        @Option(
            help:
                "Write the frames read, answers drawn, at the source's timing (.mp4, .mkv, .mov...; with --every only every Nth)."
        )
        var annotate: String?

        @Flag(help: "Print one JSON object per answered frame (JSON Lines), and the summary as JSON on stderr.")
        var json = false

        func validate() throws {
            if let every { try OptionLimits.check(every, "--every", in: 1...1_000_000) }
            if let interval { try OptionLimits.check(interval, "--interval", in: 0...3_600_000) }
            if let framesPerSecond { try OptionLimits.check(framesPerSecond, "--fps", in: 0.01...1000) }
            if let maxFrames { try OptionLimits.check(maxFrames, "--max-frames", in: 1...Int(Int32.max)) }
            try OptionLimits.check(watchdog, "--watchdog", in: 0.5...3600)
            try OptionLimits.check(reconnect, "--reconnect", in: 0...1_000_000)
            if every != nil && interval != nil {
                throw ValidationError("--every is for video mode and --interval for live mode: give one.")
            }
            if every != nil, mode == .live {
                throw ValidationError("--every is for video mode; live mode takes --interval.")
            }
            if interval != nil, mode == .video {
                throw ValidationError("--interval is for live mode; video mode takes --every.")
            }
        }

        func run() throws {
            let video = VideoSource(source)
            do {
                try video.check()
            } catch {
                throw TaskFailure(message: "\(error)")
            }
            let runningMode: RunningMode
            switch mode ?? (every != nil ? .video : interval != nil ? .live : video.isLive ? .live : .video) {
            case .video: runningMode = .video
            case .live: runningMode = .liveStream(minimumInterval: .milliseconds(interval ?? 0))
            }
            let loaded = try model.load(defaultFor: .classification)
            if let notice = model.assumptionNotice(for: loaded, task: ImageTask.kind(of: loaded)) {
                Console.diagnostic(notice)
            }
            var taskOptions = ImageTask.Options()
            results.apply(to: &taskOptions)
            // One interpreter reads the frames in order: --runtime-threads, else --threads, runs inside it.
            taskOptions.threadCount = model.runtimeThreadCount(else: model.threads ?? 1)
            taskOptions.isErrorLoggingEnabled = model.verbose
            let pool = try VisionTaskPool(count: 1) { try ImageTask(model: loaded, options: taskOptions) }

            var frameOptions = FrameSource.Options(
                frameSize: annotate == nil
                    ? .covering(pool.preprocessing.size) : .fitting(PixelSize(width: 1920, height: 1920)))
            frameOptions.everyNthFrame = every ?? 1
            frameOptions.framesPerSecond = framesPerSecond
            frameOptions.readsAtNativeRate = realtime
            frameOptions.stallTimeout = .milliseconds(Int(watchdog * 1000))
            frameOptions.reconnectionAttempts = reconnect
            frameOptions.frameLimit = maxFrames
            let frames = FrameSource(video, options: frameOptions)
            let runner = StreamRunner(pool: pool, mode: runningMode)
            let session = StreamSession(
                source: video, modelName: loaded.name, kind: pool.kind, runner: runner, frames: frames,
                results: results, json: json, maxFrames: maxFrames, annotate: annotate)
            let outcome = AsyncCommand.wait { await session.run() }
            session.printSummary(outcome)
            if let error = outcome.error { throw TaskFailure(message: "\(error)") }
            if runner.statistics.failed > 0 { throw ExitCode.failure }
            if outcome.interrupted { throw ExitCode(130) }
        }
    }
}

/// One `netrunner stream` run: prints answers, writes the annotated video, keeps latencies.
private final class StreamSession: Sendable {
    struct Outcome: Sendable {
        var elapsed: Duration
        /// From the first frame's arrival to the last event (start-up left out).
        var steady: Duration?
        /// Frames seen after the first.
        var steadyFrames: Int
        var error: (any Error)?
        var interrupted: Bool
    }

    let source: VideoSource
    let modelName: String
    let kind: ImageTask.Kind
    let runner: StreamRunner
    let frames: FrameSource
    let results: ResultOptions
    let json: Bool
    let maxFrames: Int?
    let annotate: String?
    /// Bounded however long the stream runs.
    private let latencies = Mutex<(inference: LatencySamples, delay: LatencySamples)>((.init(), .init()))
    /// Live mode: the events not yet taken by the loop that prints them.
    let backlog = OutputBacklog(limit: StreamEvents.liveBufferLimit / 2)
    /// The answers printed.
    private let printed = Atomic<Int>(0)

    init(
        source: VideoSource, modelName: String, kind: ImageTask.Kind, runner: StreamRunner, frames: FrameSource,
        results: ResultOptions, json: Bool, maxFrames: Int?, annotate: String?
    ) {
        self.source = source
        self.modelName = modelName
        self.kind = kind
        self.runner = runner
        self.frames = frames
        self.results = results
        self.json = json
        self.maxFrames = maxFrames
        self.annotate = annotate
    }

    /// What the reading loop leaves behind.
    private struct Progress: Sendable {
        var failure: (any Error)? = nil
        var seen = 0
        var firstFrame: ContinuousClock.Instant? = nil
        var lastEvent: ContinuousClock.Instant? = nil
    }

    func run() async -> Outcome {
        let interruption = Interruption()
        let started = ContinuousClock.now
        // Ctrl-C stops the loop at once, even while a source sends nothing; the annotated video
        // is then finished, so it is a whole file.
        let loop = Task { await readEvents(interruption) }
        let watcher = Task {
            while !Task.isCancelled {
                if interruption.happened {
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
            error: progress.failure, interrupted: interruption.happened)
    }

    private func readEvents(_ interruption: Interruption) async -> Progress {
        var progress = Progress()
        var annotation = annotate.map { AnnotatedVideo(path: $0) }
        // Live mode: frames are held back while the reader of stdout is behind, so the runner's
        // bounded buffer of events never overflows and loses answers.
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
                    let shown = results.worthPrinting(answer.answer)
                    latencies.withLock {
                        $0.inference.add(shown.inferenceMilliseconds)
                        $0.delay.add(answer.delayMilliseconds)
                    }
                    try printAnswer(FrameAnswer(frame: answer.frame, answer: shown, answeredAt: answer.answeredAt))
                    printed.add(1, ordering: .relaxed)
                    try await annotation?.add(answer.frame, answer: shown)
                case .dropped(let frame, _):
                    try await annotation?.add(frame, answer: nil)
                case .failed(let frame, let problem):
                    if json {
                        try ClassificationOutput.printLine(
                            StreamLine(
                                record: BulkRecord(image: source.description, error: "\(problem)"), frame: frame,
                                delay: nil))
                    } else {
                        Console.diagnostic("frame \(frame.index): \(problem)")
                    }
                    try await annotation?.add(frame, answer: nil)
                }
                if interruption.happened || Task.isCancelled { break }
            }
        } catch {
            if !interruption.happened && !(error is CancellationError) { progress.failure = error }
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

    private func printAnswer(_ answer: FrameAnswer) throws {
        if json {
            try ClassificationOutput.printLine(
                StreamLine(
                    record: BulkRecord(image: source.description, answer: answer.answer), frame: answer.frame,
                    delay: answer.delayMilliseconds))
            return
        }
        let time = Console.format(answer.frame.timestampMilliseconds / 1000, decimals: 3)
        let head =
            "frame \(answer.frame.index)  \(time) s  (\(Console.format(answer.answer.inferenceMilliseconds, decimals: 1)) ms)"
        switch answer.answer {
        case .classification(let result):
            let best = result.categories.prefix(3).map {
                "\($0.displayName ?? $0.label ?? "class \($0.index)") \(Console.format(Double($0.score), decimals: 3))"
            }
            Console.print(
                head + "  " + (best.isEmpty ? "(no label above the threshold)" : best.joined(separator: ", ")))
        case .detection(let result):
            let boxes = result.detections.map { detection in
                let box = detection.boundingBox
                let name = detection.categories.first.flatMap { $0.displayName ?? $0.label } ?? "object"
                return "\(name) \(Console.format(Double(detection.score), decimals: 2)) "
                    + "(\(Int(box.minX.rounded())),\(Int(box.minY.rounded())))-(\(Int(box.maxX.rounded())),\(Int(box.maxY.rounded())))"
            }
            Console.print(
                head + "  " + (boxes.isEmpty ? "(nothing)" : "\(boxes.count): " + boxes.joined(separator: ", ")))
        }
    }

    /// The summary: on stderr, as text or one JSON line.
    func printSummary(_ outcome: Outcome) {
        let error = outcome.error
        let stream = runner.statistics
        let source = frames.statistics
        let seconds = max(outcome.elapsed.inMillisecondsValue / 1000, 1e-9)
        let steadySeconds = outcome.steady.map { $0.inMillisecondsValue / 1000 } ?? 0
        let steadyRate = steadySeconds > 0 ? Double(outcome.steadyFrames) / steadySeconds : nil
        let (inferenceSummary, delaySummary) = latencies.withLock { ($0.inference.summary, $0.delay.summary) }
        let heldBack = backlog.heldBack
        // Answers inferred but never printed (an interruption leaves some): said, never silent.
        let notPrinted = max(0, stream.inferred - printed.load(ordering: .relaxed))
        if json {
            let summary = StreamSummary(
                source: self.source.description, model: modelName,
                mode: runner.mode == .video ? "video" : "live", decoded: source.decoded, received: source.received,
                skippedByEvery: source.skippedByEvery, inferred: stream.inferred, failed: stream.failed,
                droppedWhileBusy: stream.droppedWhileBusy, droppedByInterval: stream.droppedByInterval,
                droppedWhileOutputBehind: heldBack, notPrinted: notPrinted, reconnections: source.reconnections,
                repairedTimestamps: source.repairedTimestamps,
                seconds: StreamSummary.round(seconds, StreamSummary.millisecondDecimals),
                receivedPerSecond: StreamSummary.round(Double(source.received) / seconds, StreamSummary.rateDecimals),
                inferredPerSecond: StreamSummary.round(Double(stream.inferred) / seconds, StreamSummary.rateDecimals),
                steadyPerSecond: steadyRate.map { StreamSummary.round($0, StreamSummary.rateDecimals) },
                inferenceMilliseconds: inferenceSummary.map(StreamSummary.round),
                delayMilliseconds: delaySummary.map(StreamSummary.round), error: error.map { "\($0)" })
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            if let data = try? encoder.encode(["summary": summary]) {
                Console.diagnostic(String(decoding: data, as: UTF8.self))
            }
            return
        }
        let mode = runner.mode == .video ? "video mode" : "live mode"
        Console.diagnostic("\(self.source): \(mode), \(modelName)")
        var frameLine =
            "  frames: \(source.decoded) decoded, \(source.received) received, \(stream.inferred) inferred"
        if source.skippedByEvery > 0 { frameLine += ", \(source.skippedByEvery) skipped by --every" }
        if runner.mode != .video {
            frameLine +=
                ", \(stream.droppedWhileBusy) dropped while busy, \(stream.droppedByInterval) dropped by interval"
            if heldBack > 0 { frameLine += ", \(heldBack) dropped while stdout was behind" }
        }
        if stream.failed > 0 { frameLine += ", \(stream.failed) failed" }
        if notPrinted > 0 { frameLine += ", \(notPrinted) answers not printed" }
        Console.diagnostic(frameLine)
        Console.diagnostic(
            "  rate: \(Console.format(Double(source.received) / seconds, decimals: 1)) frames/s received, "
                + "\(Console.format(Double(stream.inferred) / seconds, decimals: 1)) inferred/s over "
                + "\(Console.format(seconds, decimals: 2)) s"
                + (steadyRate.map { "; \(Console.format($0, decimals: 1)) frames/s after the first frame" } ?? ""))
        if let inferenceSummary, let delaySummary {
            Console.diagnostic(
                "  latency (ms): inference p50 \(Console.format(inferenceSummary.median, decimals: 2)), "
                    + "p90 \(Console.format(inferenceSummary.p90, decimals: 2)), p99 \(Console.format(inferenceSummary.p99, decimals: 2)); "
                    + "frame to answer p50 \(Console.format(delaySummary.median, decimals: 2)), "
                    + "p99 \(Console.format(delaySummary.p99, decimals: 2))")
        }
        if source.reconnections > 0 || source.repairedTimestamps > 0 {
            Console.diagnostic(
                "  \(source.reconnections) reconnections, \(source.repairedTimestamps) timestamps repaired")
        }
    }
}

/// How far the loop that prints a live stream's answers is behind the runner.
///
/// Frames handed to the runner (each makes one event) against events taken. A frame that comes while the loop is
/// `limit` events behind (stdout read slowly) is held back and counted instead of inferred, so
/// the runner's buffer of ``StreamEvents/liveBufferLimit`` events never fills and no answer is
/// lost: live mode's "latest frame wins", applied to the reader as it is to the model.
private final class OutputBacklog: Sendable {
    let limit: Int
    private let handed = Atomic<Int>(0)
    private let takenCount = Atomic<Int>(0)
    private let held = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Whether a frame may go to the runner (if not, it is counted as held back).
    func admit() -> Bool {
        guard handed.load(ordering: .acquiring) - takenCount.load(ordering: .acquiring) < limit else {
            held.add(1, ordering: .relaxed)
            return false
        }
        handed.add(1, ordering: .acquiringAndReleasing)
        return true
    }

    /// The loop took an event.
    func taken() { takenCount.add(1, ordering: .acquiringAndReleasing) }

    /// Frames held back so far.
    var heldBack: Int { held.load(ordering: .relaxed) }
}

/// A live stream's frames, those that come while stdout's reader is behind left out (``OutputBacklog``).
private struct PacedFrames: AsyncSequence, Sendable {
    typealias Element = VideoFrame
    typealias Failure = any Error

    let base: FrameSource
    let backlog: OutputBacklog

    func makeAsyncIterator() -> Iterator { Iterator(inner: base.makeAsyncIterator(), backlog: backlog) }

    struct Iterator: AsyncIteratorProtocol {
        var inner: FrameSource.Iterator
        let backlog: OutputBacklog

        mutating func next() async throws -> VideoFrame? {
            while let frame = try await inner.next() {
                if backlog.admit() { return frame }
            }
            return nil
        }
    }
}

/// A frame's JSON line: a `bulk` results line (docs/results-line.schema.json) with the frame's
/// number, timestamp and delay.
private struct StreamLine: Encodable {
    var record: BulkRecord
    var frame: VideoFrame
    var delay: Double?

    enum Keys: String, CodingKey {
        case frame
        case timestamp = "timestamp_ms"
        case delay = "delay_ms"
    }

    func encode(to encoder: any Encoder) throws {
        try record.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(frame.index, forKey: .frame)
        try container.encode((frame.timestampMilliseconds * 1000).rounded() / 1000, forKey: .timestamp)
        if let delay { try container.encode((delay * 1000).rounded() / 1000, forKey: .delay) }
    }
}

/// The summary's JSON.
private struct StreamSummary: Encodable {
    var source: String
    var model: String
    var mode: String
    var decoded: Int
    var received: Int
    var skippedByEvery: Int
    var inferred: Int
    var failed: Int
    var droppedWhileBusy: Int
    var droppedByInterval: Int
    var droppedWhileOutputBehind: Int
    var notPrinted: Int
    var reconnections: Int
    var repairedTimestamps: Int
    var seconds: Double
    var receivedPerSecond: Double
    var inferredPerSecond: Double
    var steadyPerSecond: Double?
    var inferenceMilliseconds: LatencySummary?
    var delayMilliseconds: LatencySummary?
    var error: String?

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

/// The annotated video of `--annotate`: every frame that reaches the process (with `--every N`
/// only every Nth: ffmpeg leaves the others out), with the latest answer drawn, at the source's timing.
private struct AnnotatedVideo {
    let path: String
    var writer: VideoWriter? = nil
    var first: VideoFrame? = nil
    var latest: (answer: ImageAnswer, sourceSize: PixelSize)? = nil
    var lastIndex = -1

    init(path: String) {
        self.path = path
    }

    mutating func add(_ frame: VideoFrame, answer: ImageAnswer?) async throws {
        if let answer { latest = (answer, frame.sourceSize) }
        // Live mode answers a frame after later ones were written: its answer is drawn from now on.
        guard frame.index > lastIndex else { return }
        lastIndex = frame.index
        guard let writer else {
            guard let first else {
                first = frame
                return
            }
            let step = frame.timestampMilliseconds - first.timestampMilliseconds
            let fps = step > 0 ? 1000 / step : 25
            let writer = try VideoWriter(path: path, size: first.pixels.size, framesPerSecond: fps)
            self.writer = writer
            try await writer.write(draw(on: first))
            try await writer.write(draw(on: frame))
            return
        }
        try await writer.write(draw(on: frame))
    }

    mutating func finish() async throws {
        if writer == nil, let first {
            let writer = try VideoWriter(path: path, size: first.pixels.size, framesPerSecond: 25)
            self.writer = writer
            try await writer.write(draw(on: first))
        }
        try await writer?.finish()
    }

    private func draw(on frame: VideoFrame) throws -> PixelBuffer {
        guard let latest else { return frame.pixels }
        return try Annotator.draw(
            latest.answer.scaled(from: latest.sourceSize, to: frame.pixels.size), on: frame.pixels)
    }
}

extension Duration {
    fileprivate var inMillisecondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
