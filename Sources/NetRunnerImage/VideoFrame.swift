/// One picture of a video or a live stream, with where it sits in time.
///
/// What a frame source (`NetRunnerVideo.FrameSource`: a file, a URL, a camera) hands to the
/// vision tasks' video and live-stream modes. NetRunner assigns the timestamps, so a caller never
/// has to invent them (MediaPipe's `detect_for_video` asks the caller for them).
public struct VideoFrame: Sendable {
    /// The pixels, at the size the source delivered (often scaled down to what the model needs).
    public var pixels: PixelBuffer
    /// The frame's number in the source, from 0: its position among the decoded frames (after a
    /// frame-rate filter, if any), so every Nth frame keeps its own number; it keeps counting
    /// across reconnections of a live source.
    public var index: Int
    /// Milliseconds from the start of the stream, strictly increasing from frame to frame.
    ///
    /// The presentation time for files, a monotonic clock for live sources.
    public var timestampMilliseconds: Double
    /// The size of the source's own picture, which answers are reported in; `pixels.size` when
    /// the frame was not scaled.
    public var sourceSize: PixelSize
    /// When the frame arrived in this process.
    public var receivedAt: ContinuousClock.Instant

    /// Creates a frame.
    ///
    /// - Parameters:
    ///   - pixels: The pixels.
    ///   - index: The frame's position, from 0.
    ///   - timestampMilliseconds: Milliseconds from the start of the stream.
    ///   - sourceSize: The source's picture size (default: the pixels' size).
    ///   - receivedAt: When the frame arrived (default: now).
    public init(
        pixels: PixelBuffer, index: Int, timestampMilliseconds: Double, sourceSize: PixelSize? = nil,
        receivedAt: ContinuousClock.Instant = .now
    ) {
        self.pixels = pixels
        self.index = index
        self.timestampMilliseconds = timestampMilliseconds
        self.sourceSize = sourceSize ?? pixels.size
        self.receivedAt = receivedAt
    }
}
