import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage
import NetRunnerJobs
import NetRunnerSupport
import NetRunnerVideo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension NetRunnerCommand {
    /// `netrunner stream SOURCE`: a model on every frame of a video, a URL or a camera.
    struct Stream: AsyncParsableCommand {
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

        @OptionGroup var taskChoice: TaskOption

        @OptionGroup var results: ResultFlags

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

        func run() async throws {
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
            let loaded = try await model.load(defaultFor: .classification)
            let kind = try taskChoice.kind(for: loaded)
            if let notice = model.assumptionNotice(for: loaded, task: kind) {
                Console.diagnostic(notice)
            }
            var taskOptions = ImageTask.Options()
            taskOptions.kind = kind
            taskOptions.baseOptions = model.baseOptions
            taskOptions.results = results.options
            // One interpreter reads the frames in order: --runtime-threads, else --threads, runs inside it.
            taskOptions.threadCount = model.runtimeThreadCount(else: model.threads ?? 1)
            let pool = try VisionTaskPool(count: 1) {
                let task = try ImageTask(model: loaded, options: taskOptions)
                AcceleratorNotice.note(
                    requested: taskOptions.accelerator, fallbackReason: task.acceleratorFallbackReason)
                return task
            }

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
            let results = self.results
            let session = StreamSession(
                source: video, modelName: loaded.name, runner: runner, frames: frames, annotate: annotate,
                shown: { results.options.shown($0) }, output: StreamPrinter(source: video.description, json: json))
            let interruption = Interruption()
            let outcome = await session.run(isInterrupted: { interruption.happened })
            let summary = session.summary(of: outcome)
            // A source that never gave a frame (no ffmpeg, a missing file) has only its error to say.
            if outcome.error == nil || summary.decoded > 0 { Self.printSummary(summary, json: json) }
            if let error = outcome.error { throw TaskFailure(message: "\(error)") }
            if runner.statistics.failed > 0 { throw ExitCode.failure }
            if outcome.interrupted { throw ExitCode(interruption.exitCode) }
        }
    }
}

/// Prints a stream's answers: one line per frame, as text or as a JSON results line.
private struct StreamPrinter: StreamOutput {
    let source: String
    let json: Bool

    func answered(_ answer: FrameAnswer) throws {
        if json {
            try AnswerOutput.printLine(
                StreamLine(
                    record: ResultsLine(image: source, answer: answer.answer), frame: answer.frame,
                    delay: answer.delayMilliseconds))
            return
        }
        let time = Console.format(answer.frame.timestampMilliseconds / 1000, decimals: 3)
        let head =
            "frame \(answer.frame.index)  \(time) s  (\(Console.format(answer.answer.inferenceMilliseconds, decimals: 1)) ms)"
        Console.print(head + "  " + answer.answer.summary)
    }

    func failed(_ frame: VideoFrame, problem: String) throws {
        if json {
            try AnswerOutput.printLine(
                StreamLine(record: ResultsLine(image: source, error: problem), frame: frame, delay: nil))
        } else {
            Console.diagnostic("frame \(frame.index): \(problem)")
        }
    }
}

extension NetRunnerCommand.Stream {
    /// The summary: on stderr, as text or one JSON line.
    static func printSummary(_ summary: StreamSummary, json: Bool) {
        if json {
            let encoder = JSONCoding.encoder()
            if let data = try? encoder.encode(["summary": summary]) {
                Console.diagnostic(String(decoding: data, as: UTF8.self))
            }
            return
        }
        let live = summary.mode != "video"
        Console.diagnostic("\(summary.source): \(summary.mode) mode, \(summary.model)")
        var frameLine =
            "  frames: \(summary.decoded) decoded, \(summary.received) received, \(summary.inferred) inferred"
        if summary.skippedByEvery > 0 { frameLine += ", \(summary.skippedByEvery) skipped by --every" }
        if live {
            frameLine +=
                ", \(summary.droppedWhileBusy) dropped while busy, \(summary.droppedByInterval) dropped by interval"
            if summary.droppedWhileOutputBehind > 0 {
                frameLine += ", \(summary.droppedWhileOutputBehind) dropped while stdout was behind"
            }
        }
        if summary.failed > 0 { frameLine += ", \(summary.failed) failed" }
        if summary.notPrinted > 0 { frameLine += ", \(summary.notPrinted) answers not printed" }
        Console.diagnostic(frameLine)
        Console.diagnostic(
            "  rate: \(Console.format(summary.receivedPerSecond, decimals: 1)) frames/s received, "
                + "\(Console.format(summary.inferredPerSecond, decimals: 1)) inferred/s over "
                + "\(Console.format(summary.seconds, decimals: 2)) s"
                + (summary.steadyPerSecond.map {
                    "; \(Console.format($0, decimals: 1)) frames/s after the first frame"
                } ?? ""))
        if let inference = summary.inferenceMilliseconds, let delay = summary.delayMilliseconds {
            Console.diagnostic(
                "  latency (ms): inference p50 \(Console.format(inference.median, decimals: 2)), "
                    + "p90 \(Console.format(inference.p90, decimals: 2)), p99 \(Console.format(inference.p99, decimals: 2)); "
                    + "frame to answer p50 \(Console.format(delay.median, decimals: 2)), "
                    + "p99 \(Console.format(delay.p99, decimals: 2))")
        }
        if summary.reconnections > 0 || summary.repairedTimestamps > 0 {
            Console.diagnostic(
                "  \(summary.reconnections) reconnections, \(summary.repairedTimestamps) timestamps repaired")
        }
    }
}

/// A frame's JSON line: a `bulk` results line (docs/results-line.schema.json) with the frame's
/// number, timestamp and delay.
private struct StreamLine: Encodable {
    var record: ResultsLine
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
