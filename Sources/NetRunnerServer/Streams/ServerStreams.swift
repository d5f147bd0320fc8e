import FoundationEssentials
import Logging
import NetRunner
import NetRunnerEngine
import NetRunnerImage
import NetRunnerSupport
import NetRunnerVideo
import Synchronization

/// Video streams the server reads itself (`serve --stream [NAME=]SOURCE`): cameras, live URLs,
/// or files played at their own rate in a loop, each run in live mode on the engine (its
/// workers, `--threads`, queue and `--accelerator`, shared with the requests), the latest
/// answer and an annotated JPEG kept for the page's preview.
///
/// A source that fails is tried again every few seconds for as long as the server runs.
final class ServerStreams: Sendable {
    /// One stream as the server was told it.
    struct Stream: Sendable {
        var name: String
        var source: VideoSource
    }

    /// What a stream last did, for `/v1/streams`.
    struct Status: Sendable {
        var state = "starting"
        var problem: String? = nil
        var record: ResultsLine? = nil
        var frame = -1
        var timestampMilliseconds = 0.0
        var jpeg: [UInt8]? = nil
        /// Counts of the current run (a file starts a new run each time it loops).
        var statistics = StreamStatistics()
        var source = FrameSourceStatistics()
        /// Counts of the runs before.
        var earlier = StreamStatistics()
        var earlierReconnections = 0
        var restarts = 0

        /// Counts since the server started.
        var total: StreamStatistics {
            var total = earlier
            total.received += statistics.received
            total.inferred += statistics.inferred
            total.failed += statistics.failed
            total.droppedWhileBusy += statistics.droppedWhileBusy
            total.droppedByInterval += statistics.droppedByInterval
            return total
        }

        /// Reconnections since the server started.
        var reconnections: Int { earlierReconnections + source.reconnections }
    }

    let streams: [Stream]
    let model: ServedModel
    let interval: Duration
    private let task: EngineVisionTask
    private let statuses: Mutex<[String: Status]>
    private let logger: Logger

    /// Creates the streams (nothing is read until ``run()``).
    ///
    /// - Parameters:
    ///   - streams: The sources, by name.
    ///   - model: The model they run.
    ///   - engine: The engine the frames are answered by: its workers, threads, queue and
    ///     accelerator, shared with the requests (a full queue drops a frame).
    ///   - interval: The minimum interval between two inferences of one stream.
    ///   - logger: The logger.
    init(streams: [Stream], model: ServedModel, engine: InferenceEngine, interval: Duration, logger: Logger) {
        self.streams = streams
        self.model = model
        self.interval = interval
        self.logger = logger
        task = EngineVisionTask(engine: engine, model: model.id)
        statuses = Mutex(Dictionary(uniqueKeysWithValues: streams.map { ($0.name, Status()) }))
    }

    /// The status of a stream, or `nil` for an unknown name.
    func status(_ name: String) -> Status? { statuses.withLock { $0[name] } }

    /// Reads every stream until cancelled.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            for stream in streams {
                group.addTask { await self.keepReading(stream) }
            }
        }
    }

    private func keepReading(_ stream: Stream) async {
        var first = true
        while !Task.isCancelled {
            if !first {
                update(stream.name) {
                    $0.earlier = $0.total
                    $0.earlierReconnections = $0.reconnections
                    $0.statistics = StreamStatistics()
                    $0.source = FrameSourceStatistics()
                    $0.restarts += 1
                }
            }
            first = false
            var options = FrameSource.Options(frameSize: .fitting(PixelSize(width: 960, height: 960)))
            options.readsAtNativeRate = !stream.source.isLive
            options.reconnectionAttempts = 1_000_000
            let frames = FrameSource(stream.source, options: options, logger: logger)
            let runner = StreamRunner(task: task, mode: .liveStream(minimumInterval: interval))
            do {
                for try await event in runner.events(for: frames) {
                    if case .answered(let answer) = event { record(answer, stream: stream) }
                    let statistics = runner.statistics
                    let source = frames.statistics
                    update(stream.name) {
                        $0.statistics = statistics
                        $0.source = source
                        if $0.state != "running" {
                            $0.state = "running"
                            $0.problem = nil
                        }
                    }
                }
                // A file ended: play it again.
                update(stream.name) { $0.state = "restarting" }
                try? await Task.sleep(for: .milliseconds(100))
            } catch {
                if Task.isCancelled { return }
                // A camera's password, quoted by ffmpeg, reaches neither the log nor the status.
                let problem = URLCredentials.masked("\(error)")
                logger.warning("stream \(stream.name): \(problem)")
                update(stream.name) {
                    $0.state = "failed"
                    $0.problem = problem
                }
                try? await Task.sleep(for: .seconds(3))
            }
        }
    }

    private func record(_ answer: FrameAnswer, stream: Stream) {
        let shown = answer.answer.withoutUnprintableScores
        let jpeg = try? Annotator.draw(
            shown.scaled(from: answer.frame.sourceSize, to: answer.frame.pixels.size), on: answer.frame.pixels
        ).jpegData(quality: 80)
        update(stream.name) {
            $0.record = ResultsLine(image: stream.source.description, model: model.id, answer: shown)
            $0.frame = answer.frame.index
            $0.timestampMilliseconds = answer.frame.timestampMilliseconds
            if let jpeg { $0.jpeg = Array(jpeg) }
        }
    }

    private func update(_ name: String, _ change: (inout Status) -> Void) {
        statuses.withLock { statuses in
            guard var status = statuses[name] else { return }
            change(&status)
            statuses[name] = status
        }
    }
}

/// The engine as a stream's task: each frame is a request for the model, on the engine's
/// workers.
struct EngineVisionTask: AsyncVisionTask {
    let engine: InferenceEngine
    let model: String

    func run(_ image: ImageInput) async throws -> ImageAnswer {
        try await engine.answer(model: model, input: image)
    }

    /// A full queue: the frame is dropped while busy, as live mode drops one the model is busy for.
    func isBusy(_ error: any Error) -> Bool {
        if case EngineError.busy = error { return true }
        return false
    }
}
