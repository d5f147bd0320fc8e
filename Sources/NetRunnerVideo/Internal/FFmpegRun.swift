import Logging
import NetRunnerImage
import NetRunnerSupport
import Subprocess
import Synchronization

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// One run of the ffmpeg child: frames from its stdout, paired with its log on stderr, into the
/// channel, under a watchdog.
struct FFmpegRun {
    /// How the run ended.
    struct Outcome {
        var frames = 0
        var consumerStopped = false
        var stalled = false
        var oversized: PixelSize? = nil
        var status: TerminationStatus? = nil
        var reason = ""

        /// The error a non-live source ends with, if any.
        func throwIfFailed(source: VideoSource, options: FrameSource.Options, framesSoFar: Int) throws {
            let name = source.description
            if stalled { throw VideoError.stalled(source: name, seconds: options.stallTimeout.inMilliseconds / 1000) }
            if let oversized {
                throw VideoError.frameTooLarge(
                    source: name, width: oversized.width, height: oversized.height, limit: options.maximumPixels)
            }
            let failed = status != .exited(0)
            if reason.contains("matches no streams") { throw VideoError.noVideoStream(source: name) }
            if framesSoFar == 0 { throw VideoError.noFrames(source: name, details: reason) }
            if failed { throw VideoError.sourceFailed(source: name, details: reason) }
        }
    }

    let source: VideoSource
    let options: FrameSource.Options
    let logger: Logger
    let progress: FrameSourceProgress
    let channel: FrameChannel<VideoFrame>

    func run(nextIndex: inout Int, timing: inout Timestamps) async throws -> Outcome {
        let command = FFmpegCommand(source: source, options: options)
        let executable: Executable =
            options.ffmpeg.contains("/") ? .path(FilePath(options.ffmpeg)) : .name(options.ffmpeg)
        var platform = PlatformOptions()
        // Its own process group: a Ctrl-C at the terminal reaches this process, which stops ffmpeg.
        platform.processGroupID = 0
        platform.teardownSequence = [.send(signal: .kill, allowedDurationToNextStep: .seconds(1))]
        let shared = RunState(timeout: options.stallTimeout)
        let options = self.options
        let progress = self.progress
        let channel = self.channel
        let logger = self.logger
        let everyNthFrame = max(1, options.everyNthFrame)
        // Frame numbers keep counting across reconnections: this run's start at the frames decoded so far.
        let firstNumber = progress.statistics.decoded
        do {
            let input: FileDescriptorInput =
                source.kind == .standardInput
                ? .fileDescriptor(.standardInput, closeAfterSpawningProcess: false)
                : .fileDescriptor(try FileDescriptor.open("/dev/null", .readOnly), closeAfterSpawningProcess: true)
            let result = try await Subprocess.run(
                executable, arguments: Arguments(command.arguments), platformOptions: platform, input: input,
                output: .sequence, error: .sequence
            ) { execution in
                let (infos, infoSink) = AsyncStream<FFmpegLog.FrameInfo>.makeStream()
                return try await withThrowingTaskGroup(of: Void.self) { group in
                    // The log: frame lines paired into infos, the rest kept for messages.
                    group.addTask {
                        var log = FFmpegLog(command: command, everyNthFrame: everyNthFrame)
                        var pending: [UInt8] = []
                        do {
                            for try await chunk in execution.standardError {
                                chunk.withUnsafeBytes { pending.append(contentsOf: $0) }
                                var start = 0
                                while let end = pending[start...].firstIndex(where: { $0 == 10 || $0 == 13 }) {
                                    let line = String(decoding: pending[start..<end], as: UTF8.self)
                                    start = end + 1
                                    switch log.read(Substring(line)) {
                                    case .decoded(let number):
                                        shared.touch()
                                        progress.counters.withLock {
                                            $0.decoded += 1
                                            if number % everyNthFrame != 0 { $0.skippedByEvery += 1 }
                                        }
                                    case .frame(let info): infoSink.yield(info)
                                    case .other: break
                                    }
                                }
                                pending.removeFirst(start)
                                if pending.count > 65_536 { pending.removeAll() }
                            }
                        } catch {
                            // A read error ends the log like its end does.
                        }
                        shared.explain(log.explanation, warnings: log.problems)
                        infoSink.finish()
                    }
                    // The watchdog: no frame and no decoding progress for the timeout stops ffmpeg.
                    let watched = source.canStall
                    group.addTask {
                        while !shared.isFinished {
                            try? await Task.sleep(for: .milliseconds(100))
                            if watched, shared.hasStalled() {
                                try? execution.send(signal: .kill)
                                return
                            }
                        }
                    }
                    var outcome = Outcome()
                    var reader = FrameReader(execution.standardOutput.makeAsyncIterator())
                    for await info in infos {
                        let (pixelCount, overflow) = info.size.width.multipliedReportingOverflow(by: info.size.height)
                        if overflow || pixelCount > options.maximumPixels {
                            outcome.oversized = info.size
                            try? execution.send(signal: .kill)
                            break
                        }
                        guard
                            var pixels = try? PixelBuffer(
                                width: info.size.width, height: info.size.height, format: .rgb24),
                            try await reader.fill(&pixels)
                        else { break }
                        let receivedAt = ContinuousClock.now
                        let (timestamp, repaired) = timing.next(
                            presentationTime: info.presentationTime, receivedAt: receivedAt)
                        let frame = VideoFrame(
                            pixels: pixels, index: firstNumber + info.number, timestampMilliseconds: timestamp,
                            sourceSize: info.sourceSize, receivedAt: receivedAt)
                        progress.counters.withLock {
                            $0.received += 1
                            if repaired { $0.repairedTimestamps += 1 }
                        }
                        nextIndex += 1
                        outcome.frames += 1
                        shared.pause()
                        let accepted = await channel.send(frame)
                        shared.touch()
                        let limitReached = options.frameLimit.map { nextIndex >= $0 } ?? false
                        guard accepted, !limitReached, !Task.isCancelled else {
                            outcome.consumerStopped = true
                            try? execution.send(signal: .kill)
                            break
                        }
                    }
                    if outcome.oversized != nil || outcome.consumerStopped {
                        for await _ in infos {}
                    }
                    shared.finish()
                    try await group.waitForAll()
                    outcome.stalled = shared.stalled
                    return outcome
                }
            }
            var outcome = result.closureResult
            outcome.status = result.terminationStatus
            outcome.reason = shared.explanation
            if outcome.stalled {
                outcome.reason = "no frame for \(options.stallTimeout)"
            }
            for warning in shared.warnings where outcome.frames > 0 {
                logger.debug("ffmpeg: \(warning)", metadata: ["source": "\(source)"])
            }
            return outcome
        } catch let error as SubprocessError where error.code == .executableNotFound {
            throw VideoError.ffmpegMissing(options.ffmpeg)
        }
    }
}

/// Fills frames from ffmpeg's stdout, keeping what a read returned beyond a frame for the next.
private struct FrameReader {
    var chunks: SubprocessOutputSequence.Iterator
    var carry: [UInt8] = []

    init(_ chunks: SubprocessOutputSequence.Iterator) {
        self.chunks = chunks
    }

    /// Fills every byte of `pixels` (packed RGB rows); `false` when the output ended first.
    mutating func fill(_ pixels: inout PixelBuffer) async throws -> Bool {
        let needed = pixels.width * pixels.height * 3
        var filled = 0
        var storage = pixels
        defer { pixels = storage }
        if !carry.isEmpty {
            let count = min(carry.count, needed)
            storage.withUnsafeMutableBytes { destination in
                carry.withUnsafeBytes { source in
                    guard let to = destination.baseAddress, let from = source.baseAddress else { return }
                    to.copyMemory(from: from, byteCount: count)
                }
            }
            carry.removeFirst(count)
            filled = count
        }
        while filled < needed {
            guard let chunk = try await chunks.next() else { return false }
            let offset = filled
            let used = chunk.withUnsafeBytes { source -> Int in
                let count = min(source.count, needed - offset)
                storage.withUnsafeMutableBytes { destination in
                    guard let to = destination.baseAddress, let from = source.baseAddress else { return }
                    (to + offset).copyMemory(from: from, byteCount: count)
                }
                if count < source.count { carry.append(contentsOf: source[count...]) }
                return count
            }
            filled += used
        }
        return true
    }
}

/// What the tasks of one run share: the watchdog's clock and the log's explanation.
private final class RunState: Sendable {
    private struct State {
        var lastProgress = ContinuousClock.now
        var paused = false
        var started = false
        var finished = false
        var stalled = false
        var explanation = ""
        var warnings: [String] = []
    }

    private let state = Mutex(State())
    private let timeout: Duration

    init(timeout: Duration) {
        self.timeout = timeout
    }

    func touch() {
        state.withLock {
            $0.lastProgress = .now
            $0.paused = false
        }
    }
    func pause() { state.withLock { $0.paused = true } }
    func finish() { state.withLock { $0.finished = true } }
    var isFinished: Bool { state.withLock { $0.finished } }
    var stalled: Bool { state.withLock { $0.stalled } }
    var explanation: String { state.withLock { $0.explanation } }
    var warnings: [String] { state.withLock { $0.warnings } }

    func explain(_ explanation: String, warnings: [String]) {
        state.withLock {
            $0.explanation = explanation
            $0.warnings = warnings
        }
    }

    /// Whether nothing happened for the timeout while ffmpeg was not waiting for the consumer.
    func hasStalled() -> Bool {
        state.withLock { state in
            guard !state.paused, !state.finished, ContinuousClock.now - state.lastProgress > timeout else {
                return false
            }
            state.stalled = true
            return true
        }
    }
}
