public import Logging
public import NetRunnerImage
import NetRunnerSupport
import Subprocess
import Synchronization
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The frames of a video file, a URL, a camera or standard input, as an `AsyncSequence` of
/// ``VideoFrame``s with timestamps.
///
///     let frames = FrameSource(VideoSource("clip.mp4"), options: .init(frameSize: .covering(.square(128))))
///     for try await frame in frames {
///         print(frame.index, frame.timestampMilliseconds, frame.pixels.size)
///     }
///
/// Debian's `ffmpeg` runs as a child process and writes raw RGB frames to a pipe: a source that
/// crashes the decoder kills the child, not this process, and nothing links FFmpeg's libraries.
/// Scaling (``Options/frameSize``), frame-rate filtering and `every Nth frame` happen inside
/// ffmpeg, so only what the model needs crosses the pipe.
///
/// - Timestamps: files and standard input keep their presentation times (a missing, repeated or
///   backward one is replaced by an increasing one and counted, never an error); live sources
///   get a monotonic clock from the start, which keeps running across reconnections.
/// - A source that sends nothing for ``Options/stallTimeout`` is stopped by a watchdog (live
///   sources are then reconnected; a regular file is not watched, since a slow machine decoding
///   it is not a dead source); a live source that drops is reconnected with exponential
///   back-off, up to ``Options/reconnectionAttempts`` failures in a row.
/// - Frames are read as they are consumed: a slow consumer slows ffmpeg down through the pipe
///   (at most ``Options/bufferedFrames`` wait in memory). Live mode consumes at once and drops
///   frames itself.
///
/// The sequence can be iterated once; ``statistics`` reports what it did.
public struct FrameSource: AsyncSequence, Sendable {
    /// A frame.
    public typealias Element = VideoFrame
    /// A ``VideoError``, or a cancellation.
    public typealias Failure = any Error

    /// How frames are read.
    public struct Options: Sendable {
        /// The size ffmpeg scales frames to (default: the source's size).
        public var frameSize: FrameSize = .original
        /// Frames per second ffmpeg keeps (its `fps` filter), or `nil` for every frame.
        public var framesPerSecond: Double? = nil
        /// Only every Nth decoded frame is sent (frame 0, N, 2N...); the others are counted in
        /// ``FrameSourceStatistics/skippedByEvery``.
        public var everyNthFrame: Int = 1
        /// Read a file at its own frame rate, as if it were live (ffmpeg's `-re`).
        public var readsAtNativeRate = false
        /// The longest wait for a frame (and a network read) before the source counts as stalled.
        public var stallTimeout: Duration = .seconds(10)
        /// How many failed attempts in a row end a live source (0: never reconnect).
        public var reconnectionAttempts = 8
        /// The first wait before reconnecting; it doubles with each failure, up to 10 s.
        public var reconnectionDelay: Duration = .milliseconds(500)
        /// The largest frame (width x height) accepted from ffmpeg.
        public var maximumPixels = 40_000_000
        /// Stop after this many frames have been sent, or `nil` for no limit.
        public var frameLimit: Int? = nil
        /// Frames read ahead of the consumer.
        public var bufferedFrames = 2
        /// The ffmpeg program: a path, or a name looked up in `PATH` (default: the
        /// `NETRUNNER_FFMPEG` environment variable, else `ffmpeg`).
        public var ffmpeg: String = FrameSource.defaultFFmpeg

        /// Creates options.
        ///
        /// - Parameter frameSize: The size ffmpeg scales frames to.
        public init(frameSize: FrameSize = .original) {
            self.frameSize = frameSize
        }
    }

    /// The source.
    public let source: VideoSource
    /// The options.
    public let options: Options
    private let logger: Logger
    private let progress = FrameSourceProgress()

    /// Creates the frames of a source; nothing starts until iteration does.
    ///
    /// - Parameters:
    ///   - source: The source.
    ///   - options: How frames are read.
    ///   - logger: Where reconnections and ffmpeg's warnings are logged.
    public init(_ source: VideoSource, options: Options = Options(), logger: Logger = Logger(label: "netrunner.video"))
    {
        self.source = source
        self.options = options
        self.logger = logger
    }

    /// What the source has done so far.
    public var statistics: FrameSourceStatistics { progress.statistics }

    /// The ffmpeg named by `NETRUNNER_FFMPEG`, else `ffmpeg`.
    public static var defaultFFmpeg: String {
        if let value = getenv("NETRUNNER_FFMPEG"), value.pointee != 0 { return String(cString: value) }
        return "ffmpeg"
    }

    /// Starts reading: ffmpeg starts with the first `next()`.
    ///
    /// - Returns: The iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(pump: Pump(source: source, options: options, logger: logger, progress: progress))
    }

    /// Reads frames; stops ffmpeg when it is released or its task is cancelled.
    public struct Iterator: AsyncIteratorProtocol {
        fileprivate let pump: Pump

        /// The next frame, or `nil` at the end of the source.
        ///
        /// - Returns: The frame.
        /// - Throws: ``VideoError`` when the source fails.
        public mutating func next() async throws -> VideoFrame? {
            let pump = self.pump
            pump.start()
            return try await withTaskCancellationHandler {
                try await pump.channel.next()
            } onCancel: {
                pump.stop()
            }
        }
    }
}

/// Counters shared by a sequence and its iterator.
final class FrameSourceProgress: Sendable {
    let counters = Mutex(FrameSourceStatistics())
    var statistics: FrameSourceStatistics { counters.withLock { $0 } }
}

/// The producer: runs ffmpeg (again, for a live source that drops) and feeds the channel.
private final class Pump: Sendable {
    let channel: FrameChannel<VideoFrame>
    let source: VideoSource
    let options: Options
    let logger: Logger
    let progress: FrameSourceProgress
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let started = Atomic<Bool>(false)

    typealias Options = FrameSource.Options

    init(source: VideoSource, options: Options, logger: Logger, progress: FrameSourceProgress) {
        channel = FrameChannel(capacity: options.bufferedFrames)
        self.source = source
        self.options = options
        self.logger = logger
        self.progress = progress
    }

    deinit {
        stop()
    }

    func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let producer = Task { [self] in
            do {
                try await produce()
                channel.finish()
            } catch {
                channel.finish(.failure(error))
            }
        }
        task.withLock { $0 = producer }
    }

    func stop() {
        channel.close()
        task.withLock { $0 }?.cancel()
    }

    /// Runs ffmpeg until the source ends (or, live, until reconnecting fails too often).
    private func produce() async throws {
        try source.check()
        if source.kind == .file { try Self.checkReadable(source) }
        let clock = ContinuousClock()
        let start = clock.now
        var timing = Timestamps(live: source.isLive, start: start)
        var nextIndex = 0
        var failuresInARow = 0
        while true {
            let outcome = try await FFmpegRun(
                source: source, options: options, logger: logger, progress: progress, channel: channel
            ).run(nextIndex: &nextIndex, timing: &timing)
            if Task.isCancelled || outcome.consumerStopped { return }
            guard source.isLive else {
                try outcome.throwIfFailed(source: source, options: options, framesSoFar: nextIndex)
                return
            }
            failuresInARow = outcome.frames > 0 ? 1 : failuresInARow + 1
            guard failuresInARow <= options.reconnectionAttempts else {
                if nextIndex == 0 { try outcome.throwIfFailed(source: source, options: options, framesSoFar: 0) }
                throw VideoError.reconnectionFailed(
                    source: source.description, attempts: failuresInARow - 1, details: outcome.reason)
            }
            var delay = options.reconnectionDelay
            for _ in 1..<failuresInARow { delay = min(delay * 2, .seconds(10)) }
            logger.warning(
                "\(source): \(outcome.reason.isEmpty ? "the stream ended" : outcome.reason); reconnecting in \(delay)")
            try await Task.sleep(for: delay)
            progress.counters.withLock { $0.reconnections += 1 }
        }
    }

    private static func checkReadable(_ source: VideoSource) throws {
        var info = stat()
        guard stat(source.location, &info) == 0 else {
            let reason = errno == ENOENT ? "no such file" : String(cString: strerror(errno))
            throw VideoError.unreadable(source: source.location, reason: reason)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw VideoError.unreadable(source: source.location, reason: "is a folder, not a video file")
        }
        guard access(source.location, R_OK) == 0 else {
            throw VideoError.unreadable(source: source.location, reason: "cannot be read (permission denied)")
        }
    }
}

/// Timestamps of the frames: presentation times made strictly increasing, or a monotonic clock.
struct Timestamps {
    let live: Bool
    let start: ContinuousClock.Instant
    private(set) var last: Double? = nil
    private var lastStep = 1.0

    init(live: Bool, start: ContinuousClock.Instant) {
        self.live = live
        self.start = start
    }

    /// The timestamp of a frame, and whether the source's own one had to be replaced.
    mutating func next(presentationTime: Double?, receivedAt: ContinuousClock.Instant) -> (Double, repaired: Bool) {
        var value: Double
        var repaired = false
        if live {
            value = (receivedAt - start).inMilliseconds
        } else if let presentationTime {
            value = (presentationTime * 1_000_000).rounded() / 1000
        } else {
            value = (last ?? -lastStep) + lastStep
            repaired = true
        }
        if let last, !(value > last) {
            value = last + (live ? 0.001 : lastStep)
            repaired = !live
        }
        if let last, value - last > 0, !live { lastStep = value - last }
        last = value
        return (value, repaired)
    }
}
