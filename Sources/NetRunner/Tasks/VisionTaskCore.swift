import FoundationEssentials
import NetRunnerImage
import NetRunnerSupport
import TensorFlowLite

/// What every vision task does the same way.
///
/// It owns the interpreter, decodes with the model's decoding options, prepares the input,
/// runs the model and times each stage. A task adds only what it makes of the outputs.
///
/// - Note: Not thread-safe (it owns an interpreter).
final class VisionTaskCore {
    /// The interpreter, tensors allocated.
    let interpreter: Interpreter
    /// The preprocessing of the image input.
    let preprocessing: ImagePreprocessing
    /// How image files are decoded.
    let decodingOptions: DecodingOptions
    private let tensorizer: ImageTensorizer

    /// One image run through the model, before post-processing.
    struct Run {
        /// How the input relates to the original image.
        var transform: ImageTransform
        /// The time each stage took.
        var decode: Duration
        var preprocess: Duration
        var inference: Duration

        /// The stage times of the answer.
        ///
        /// - Parameter postprocessing: How long the task took to read the outputs.
        /// - Returns: The times, in milliseconds.
        func timings(postprocessing: Duration = .zero) -> ResultTimings {
            ResultTimings(
                decoding: decode.inMilliseconds, preprocessing: preprocess.inMilliseconds,
                inference: inference.inMilliseconds, postprocessing: postprocessing.inMilliseconds)
        }
    }

    /// Creates the interpreter a task's options ask for, tensors allocated and the
    /// description checked.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - options: The task's options.
    /// - Returns: The interpreter.
    /// - Throws: The errors of ``LoadedModel/makeInterpreter(options:)``.
    static func interpreter(for model: LoadedModel, options: some VisionTaskOptions) throws -> Interpreter {
        var runtime = Interpreter.Options()
        runtime.threadCount = options.threadCount
        runtime.accelerator = options.accelerator
        runtime.isErrorLoggingEnabled = options.isErrorLoggingEnabled
        return try model.makeInterpreter(options: runtime)
    }

    /// The interpreter and the core of a task that reads the model's image input 0 and at least
    /// one output.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - options: The task's options.
    ///   - taskDefaults: The task's conventions.
    /// - Returns: The interpreter, tensors allocated, and the core.
    /// - Throws: The errors of ``interpreter(for:options:)``;
    ///   ``NetRunnerError/notAnImageModel(model:reason:)`` for a model with no input or no
    ///   output (checked before the outputs: the more useful message), or an input that is not
    ///   an image.
    static func imageTask(
        for model: LoadedModel, options: some VisionTaskOptions, taskDefaults: ImagePreprocessing.Choices
    ) throws -> (interpreter: Interpreter, core: VisionTaskCore) {
        let interpreter = try interpreter(for: model, options: options)
        guard interpreter.inputTensorCount >= 1, interpreter.outputTensorCount >= 1 else {
            throw NetRunnerError.notAnImageModel(model: model.name, reason: "it has no input or no output")
        }
        let core = try VisionTaskCore(
            interpreter: interpreter, model: model, options: options, taskDefaults: taskDefaults)
        return (interpreter, core)
    }

    /// Creates the core of a task for its model's image input 0, its preprocessing decided by
    /// ``ImagePreprocessing``'s one rule.
    ///
    /// - Parameters:
    ///   - interpreter: The model, tensors allocated.
    ///   - model: The loaded model.
    ///   - options: The task's options.
    ///   - taskDefaults: The task's conventions.
    /// - Throws: ``NetRunnerError/notAnImageModel(model:reason:)`` for an input that is not an image.
    convenience init(
        interpreter: Interpreter, model: LoadedModel, options: some VisionTaskOptions,
        taskDefaults: ImagePreprocessing.Choices
    ) throws {
        let preprocessing = try ImagePreprocessing(
            input: try interpreter.input(at: 0), model: model, requested: options.preprocessingChoices,
            taskDefaults: taskDefaults)
        try self.init(
            interpreter: interpreter, preprocessing: preprocessing, maximumPixelCount: options.maximumPixelCount,
            scalesWhileDecoding: options.scalesWhileDecoding)
    }

    /// Creates the core of a task.
    ///
    /// - Parameters:
    ///   - interpreter: The model, tensors allocated.
    ///   - preprocessing: Its image input's preprocessing.
    ///   - maximumPixelCount: The largest image decoded.
    ///   - scalesWhileDecoding: Whether large JPEGs are scaled while decoding.
    /// - Throws: ``NetRunnerError`` for a preprocessing the tensorizer cannot apply.
    init(
        interpreter: Interpreter, preprocessing: ImagePreprocessing, maximumPixelCount: Int, scalesWhileDecoding: Bool
    ) throws {
        self.interpreter = interpreter
        self.preprocessing = preprocessing
        self.tensorizer = try ImageTensorizer(preprocessing: preprocessing)
        self.decodingOptions = preprocessing.decodingOptions(
            maximumPixelCount: maximumPixelCount, scalesWhileDecoding: scalesWhileDecoding)
    }

    /// Decodes (if needed) and prepares the image, copies it in and runs the model.
    ///
    /// - Parameter image: The image.
    /// - Returns: How the input relates to the image, and the stage times.
    /// - Throws: ``ImageError`` for an unreadable image, ``InterpreterError`` from the runtime.
    func run(_ image: ImageInput) throws -> Run {
        let clock = ContinuousClock()
        var start = clock.now
        var decodeTime = Duration.zero
        var preprocessTime = Duration.zero
        let transform: ImageTransform
        switch image {
        case .file(let path):
            let decoded = try ImageDecoder.decode(contentsOf: path, options: decodingOptions)
            decodeTime = clock.now - start
            start = clock.now
            transform = try prepare(decoded)
        case .data(let data):
            let decoded = try ImageDecoder.decode(data: data, options: decodingOptions)
            decodeTime = clock.now - start
            start = clock.now
            transform = try prepare(decoded)
        case .pixels(let pixels):
            transform = try prepare(pixels, originalSize: pixels.size)
        case .decoded(let decoded, let time):
            decodeTime = time
            transform = try prepare(decoded)
        case .prepared(let prepared, let time):
            decodeTime = time
            preprocessTime = prepared.preprocessingTime
            try interpreter.copy(prepared.input, toInputAt: preprocessing.inputIndex)
            transform = prepared.transform
        }
        let prepared = clock.now
        preprocessTime += prepared - start
        try interpreter.invoke()
        return Run(
            transform: transform, decode: decodeTime, preprocess: preprocessTime, inference: clock.now - prepared)
    }

    /// The image the input tensor holds now (see ``ImageTensorizer/image(fromInput:)``).
    func inputImage() throws -> PixelBuffer {
        try tensorizer.image(fromInput: try interpreter.input(at: preprocessing.inputIndex).data)
    }

    private func prepare(_ image: DecodedImage) throws -> ImageTransform {
        let transform = try tensorizer.prepare(image)
        try interpreter.copy(tensorizer.input, toInputAt: preprocessing.inputIndex)
        return transform
    }

    private func prepare(_ pixels: PixelBuffer, originalSize: PixelSize) throws -> ImageTransform {
        let transform = try tensorizer.prepare(pixels, originalSize: originalSize)
        try interpreter.copy(tensorizer.input, toInputAt: preprocessing.inputIndex)
        return transform
    }
}
