public import NetRunnerImage

/// The size ffmpeg scales frames to before they reach Swift, keeping the aspect ratio.
///
/// Scaling inside ffmpeg means full-resolution RGB never crosses the pipe: a 1080p frame is
/// 6.2 MB, a model's 171x128 is 66 kB.
public enum FrameSize: Sendable, Hashable {
    /// The source's own size.
    case original
    /// The smallest size that covers the given one (each side at least as large): what a model
    /// of that input size needs, whatever its crop or letterbox.
    case covering(PixelSize)
    /// The largest size within the given one, never larger than the source.
    case fitting(PixelSize)
}
