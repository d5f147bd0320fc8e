import NetRunnerImage
public import TensorFlowLite

/// The options every task shares, whatever it answers (MediaPipe's `BaseOptions`): where and
/// how the runtime runs, and how images are decoded.
///
///     var options = ImageClassifier.Options()
///     options.baseOptions.accelerator = .auto
///     options.maxResults = 3                 // the classifier's own
public struct BaseOptions: Equatable, Hashable, Sendable {
    /// CPU threads for inference.
    public var threadCount: Int = 1
    /// The hardware the model runs on; the CPU by default (see ``Accelerator``).
    public var accelerator: Accelerator = .cpu
    /// Whether the runtime's own log lines go to the `TensorFlowLite` logger.
    public var isErrorLoggingEnabled: Bool = false
    /// The largest image, in pixels, the decoder accepts (checked before allocating).
    public var maximumPixelCount: Int = DecodingOptions.defaultMaximumPixelCount
    /// Whether JPEGs much larger than the input are scaled down while decoding (off: every
    /// pixel is decoded, so the input equals Python's, Pillow's full decode and resize).
    ///
    /// Scaling happens in the DCT domain, as Pillow's `draft` does: faster on large photos
    /// (see README, "--fast-decoding"), and the input differs slightly from a full decode and
    /// resize, enough to change a close top-1.
    public var scalesWhileDecoding: Bool = false

    /// Creates the defaults: one thread on the CPU, exact decoding.
    public init() {}
}
