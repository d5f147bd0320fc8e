public import NetRunnerImage
public import TensorFlowLite

/// A task built on another task, which it runs and makes its own answer of.
///
/// How images are decoded and prepared, the labels, the accelerator and what the model saw are
/// the wrapped task's, so a new task writes only its `init` and ``VisionTask/run(_:)``.
///
///     final class MeanScoreTask: WrappingVisionTask {
///         static var kind: ImageTask.Kind { MeanScore.kind }
///         let wrapped: ImageClassifier
///         init(model: LoadedModel, options: ImageClassifier.Options) throws {
///             wrapped = try ImageClassifier(model: model, options: options)
///         }
///         func run(_ image: ImageInput) throws -> MeanScore {
///             let result = try wrapped.run(image)
///             return MeanScore(mean: ..., timings: result.timings)
///         }
///     }
public protocol WrappingVisionTask: VisionTask {
    /// The task this one runs.
    associatedtype Wrapped: VisionTask
    /// The task this one runs.
    var wrapped: Wrapped { get }
}

extension WrappingVisionTask {
    /// The wrapped task's preprocessing.
    public var preprocessing: ImagePreprocessing { wrapped.preprocessing }
    /// The wrapped task's decoding options.
    public var decodingOptions: DecodingOptions { wrapped.decodingOptions }
    /// The wrapped task's labels.
    public var labels: LabelMap? { wrapped.labels }
    /// What the wrapped task runs on.
    public var accelerator: Accelerator { wrapped.accelerator }
    /// Why the wrapped task runs on the CPU when it asked for ``Accelerator/auto``, or `nil`.
    public var acceleratorFallbackReason: String? { wrapped.acceleratorFallbackReason }

    /// The image the wrapped task's model received on the last run.
    ///
    /// - Returns: An image of the input's size.
    /// - Throws: The wrapped task's errors.
    public func inputImage() throws -> PixelBuffer { try wrapped.inputImage() }
}
