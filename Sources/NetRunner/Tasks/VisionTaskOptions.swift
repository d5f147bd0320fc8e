import NetRunnerImage
public import TensorFlowLite

/// The options every vision task has, whatever it answers: how the runtime runs, how images
/// are decoded, and the preprocessing choices the caller makes (each `nil` leaves the choice
/// to the model's description, then the task's defaults).
public protocol VisionTaskOptions: Equatable, Hashable, Sendable {
    /// The default options.
    init()
    /// CPU threads for inference.
    var threadCount: Int { get set }
    /// The hardware the model runs on (CPU, GPU, or the GPU when one is usable).
    var accelerator: Accelerator { get set }
    /// Whether the runtime's own log lines go to the `TensorFlowLite` logger.
    var isErrorLoggingEnabled: Bool { get set }
    /// The largest image, in pixels, the decoder accepts (checked before allocating).
    var maximumPixelCount: Int { get set }
    /// Whether JPEGs much larger than the input are scaled down while decoding.
    var scalesWhileDecoding: Bool { get set }
    /// The caller's preprocessing choices.
    var preprocessingChoices: ImagePreprocessing.Choices { get }
}
