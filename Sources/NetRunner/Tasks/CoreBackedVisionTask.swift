import NetRunnerImage
import TensorFlowLite

/// A library task built on a ``VisionTaskCore``: its preprocessing, decoding options,
/// accelerator and input image are the core's, so the task writes only its creation, its options
/// and its run (``ImageClassifier``, ``ObjectDetector``, ``PoseEstimator``, ``ImageSegmenter``,
/// ``ImageEmbedder``).
protocol CoreBackedVisionTask: VisionTask {
    /// The interpreter, the preprocessing and the stage timing the task runs on.
    var core: VisionTaskCore { get }
}

extension CoreBackedVisionTask {
    /// The preprocessing, derived once from the model's input.
    public var preprocessing: ImagePreprocessing { core.preprocessing }
    /// The decoding options for this model: JPEGs are downscaled no further than the input needs.
    public var decodingOptions: DecodingOptions { core.decodingOptions }
    /// What the model runs on (``Accelerator/auto`` resolved).
    public var accelerator: Accelerator { core.interpreter.accelerator }
    /// Why a task that asked for ``Accelerator/auto`` runs on the CPU, or `nil`.
    public var acceleratorFallbackReason: String? { core.interpreter.acceleratorFallbackReason }

    /// The image the model received on the last run (see ``VisionTask/inputImage()``).
    ///
    /// - Returns: An image of the input's size.
    /// - Throws: ``ImageError`` or ``InterpreterError`` if the input cannot be read.
    public func inputImage() throws -> PixelBuffer { try core.inputImage() }
}
