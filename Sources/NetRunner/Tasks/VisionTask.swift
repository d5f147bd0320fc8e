public import FoundationEssentials
public import NetRunnerImage
public import TensorFlowLite

/// A model that answers questions about images.
///
/// The classifier, the detector, and any task added beside them. A task owns its interpreter; it shares the decoding, preprocessing and
/// timing of every task and adds its own post-processing.
///
///     func firstAnswer<T: VisionTask>(_ task: T, photo: String) throws -> T.Result {
///         try task.run(.file(photo))
///     }
///
/// - Note: Not thread-safe (a task owns an interpreter); create one per thread.
public protocol VisionTask: AnyObject, SendableMetatype {
    /// What the task answers for one image.
    associatedtype Result: VisionTaskResult
    /// The task's options.
    associatedtype Options: VisionTaskOptions

    /// Creates the task for a loaded model: what the options leave open comes from the model's
    /// description (see ``LoadedModel``), then the task's defaults.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - options: The options.
    /// - Throws: ``InterpreterError`` for a bad model, ``ModelBundleError`` for a description
    ///   that does not fit it, ``NetRunnerError`` for a model this task cannot run.
    init(model: LoadedModel, options: Options) throws

    /// Which task this is.
    static var kind: ImageTask.Kind { get }

    /// How an image becomes the model's input.
    var preprocessing: ImagePreprocessing { get }
    /// How image files are decoded for this model.
    var decodingOptions: DecodingOptions { get }
    /// The labels of the model's classes, if known.
    var labels: LabelMap? { get }
    /// What the model runs on: the CPU or the GPU (``Accelerator/auto`` resolved).
    var accelerator: Accelerator { get }
    /// Why a task that asked for ``Accelerator/auto`` runs on the CPU (what the GPU lacks), or
    /// `nil` when it runs where it was asked to.
    var acceleratorFallbackReason: String? { get }

    /// Runs the model on an image.
    ///
    /// - Parameter image: The image.
    /// - Returns: The answer and the time each stage took.
    /// - Throws: ``ImageError`` for an image that cannot be read, ``InterpreterError`` if the
    ///   runtime fails.
    func run(_ image: ImageInput) throws -> Result

    /// The image the model received on the last run: its input tensor as a picture (crop or
    /// letterbox and resize applied, normalisation and channel order undone), Net Runner's
    /// "what the model sees".
    ///
    /// - Returns: An image of the input's size.
    /// - Throws: ``ImageError`` or ``InterpreterError`` if the input cannot be read.
    func inputImage() throws -> PixelBuffer
}

extension VisionTask {
    /// Creates the task from a model path, read as every command reads `--model`: a `.tflite`
    /// file (its TFLite metadata, else a `model.json` beside it, else defaults), a bundle
    /// folder or a zipped bundle.
    ///
    /// - Parameters:
    ///   - modelPath: The model.
    ///   - labelsPath: A labels file (one label per line) replacing the model's own, or `nil`.
    ///   - options: The options.
    /// - Throws: The errors of ``LoadedModel/init(_:labelsPath:)`` and ``init(model:options:)``.
    public init(modelPath: String, labelsPath: String? = nil, options: Options = Options()) throws {
        try self.init(model: try LoadedModel(.path(modelPath), labelsPath: labelsPath), options: options)
    }

    /// Creates the task from a TensorIO / Net Runner model bundle.
    ///
    /// - Parameters:
    ///   - bundle: The bundle.
    ///   - options: The options.
    /// - Throws: The errors of ``init(model:options:)``.
    public init(bundle: ModelBundle, options: Options = Options()) throws {
        try self.init(model: try LoadedModel(bundle: bundle), options: options)
    }

    /// Creates the task from a model and its description held in memory (an embedded bundle).
    ///
    /// - Parameters:
    ///   - modelData: The bytes of the `.tflite` model.
    ///   - description: Its `model.json`.
    ///   - labels: The labels of its classes, or `nil`.
    ///   - options: The options.
    /// - Throws: The errors of ``init(model:options:)``.
    public init(
        modelData: Data, description: ModelDescription, labels: LabelMap?, options: Options = Options()
    ) throws {
        let model = try LoadedModel.inMemory(
            modelData, name: description.name, description: description, labels: labels)
        try self.init(model: model, options: options)
    }

    /// Creates the task from a model held in memory.
    ///
    /// - Parameters:
    ///   - modelData: The bytes of a `.tflite` model.
    ///   - labels: The labels of its classes, or `nil` for the model's own, if any.
    ///   - options: The options.
    ///   - name: The model's name, used in errors.
    /// - Throws: The errors of ``init(model:options:)``.
    public init(modelData: Data, labels: LabelMap?, options: Options = Options(), name: String = "model data") throws {
        try self.init(
            model: try LoadedModel.inMemory(modelData, name: name, description: nil, labels: labels), options: options)
    }

    /// Runs the model on an image the decoder returned.
    ///
    /// - Parameters:
    ///   - image: The decoded image.
    ///   - decodeTime: How long decoding took, reported in the answer.
    /// - Returns: The answer, in the original image's coordinates.
    /// - Throws: The errors of ``run(_:)``.
    public func run(_ image: DecodedImage, decodeTime: Duration = .zero) throws -> Result {
        try run(.decoded(image, decodeTime: decodeTime))
    }

    /// Runs the model on an image an ``ImagePrefetcher`` prepared with this task's
    /// ``preprocessing``.
    ///
    /// - Parameters:
    ///   - prepared: The prepared input.
    ///   - decodeTime: How long decoding took, reported in the answer.
    /// - Returns: The answer, in the original image's coordinates.
    /// - Throws: ``InterpreterError/invalidTensorDataCount(provided:required:)`` when the input
    ///   was prepared for another model.
    public func run(_ prepared: PreparedImage, decodeTime: Duration = .zero) throws -> Result {
        try run(.prepared(prepared, decodeTime: decodeTime))
    }
}
