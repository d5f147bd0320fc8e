public import FoundationEssentials
public import NetRunnerImage
import TensorFlowLite

/// Classifies images with a TensorFlow Lite model: the seed apps' `ModelDataHandler`, with
/// the Task Library's and MediaPipe's options.
///
///     let classifier = try ImageClassifier(
///         modelPath: "Models/mobilenet_v2_1.0_224_uint8.tflite",
///         labelsPath: "Models/imagenet_labels.txt")
///     let result = try classifier.classify(fileAt: "cat.jpg")
///     for category in result.categories { print(category.displayName ?? "", category.score) }
///
/// Images are decoded (JPEG with DCT-domain downscaling to no less than the input size),
/// turned upright, cropped and resized as ``Options/cropping`` says, converted to the
/// input's type, run, and the output is dequantized (and softmaxed for logits) into
/// ``Category`` values.
///
/// - Note: Not thread-safe (it owns an ``Interpreter``); create one per thread.
public final class ImageClassifier {
    /// Options of a classifier; the names are the Task Library's and MediaPipe's.
    public struct Options: Equatable, Hashable, Sendable {
        /// The most categories to return (the best first); MediaPipe's `maxResults`.
        public var maxResults: Int = 5
        /// Categories scoring below this are left out; MediaPipe's `scoreThreshold`.
        public var scoreThreshold: Float = 0
        /// If not empty, only these labels are returned (full label or display name).
        public var categoryAllowlist: [String] = []
        /// These labels are never returned (full label or display name).
        public var categoryDenylist: [String] = []
        /// CPU threads for inference.
        public var threadCount: Int = 1
        /// How images are fitted to the model input (the seed's centre crop by default).
        public var cropping: ImagePreprocessing.Cropping = .centerSquare
        /// How pixels are normalised; `nil` uses ``ImagePreprocessing``'s defaults.
        public var normalization: ImagePreprocessing.Normalization? = nil
        /// The tensor's channel order.
        public var channelOrder: ImagePreprocessing.ChannelOrder = .rgb
        /// Whether the output is logits needing a softmax; `nil` decides from the values
        /// (a float output with values outside [0, 1] or not summing to 1 is treated as logits).
        public var outputsLogits: Bool? = nil
        /// The largest image, in pixels, the decoder accepts (checked before allocating).
        public var maximumPixelCount: Int = DecodingOptions.defaultMaximumPixelCount
        /// Whether JPEGs much larger than the input are scaled down while decoding.
        ///
        /// Scaling happens in the DCT domain, as Pillow's `draft` does: several times faster
        /// on large photos, and the input differs slightly from a full decode and resize.
        /// Evaluations compared with a full-decode reference turn it off.
        public var scalesWhileDecoding: Bool = true

        /// Creates options with the defaults: top 5, no threshold, one thread, centre crop.
        public init() {}
    }

    /// The options the classifier was created with.
    public let options: Options
    /// The labels of the model's classes, if a labels file was given.
    public let labels: LabelMap?
    /// The preprocessing, derived once from the model's input.
    public let preprocessing: ImagePreprocessing

    private let interpreter: Interpreter
    private let tensorizer: ImageTensorizer
    private let modelName: String
    private let filter: CategoryFilter
    private var calibration: ScoreCalibration?

    /// Creates a classifier.
    ///
    /// A model that carries TFLite metadata (as the Task Library's models do) needs nothing
    /// else: its input normalisation, its packed labels file, its score threshold (when
    /// `options.scoreThreshold` is 0) and its score calibration are used unless `options` and
    /// `labelsPath` say otherwise.

    ///
    /// - Parameters:
    ///   - modelPath: A `.tflite` image classification model.
    ///   - labelsPath: Its labels file (one label per line), or `nil` for the labels packed in
    ///     the model, if any, else indices only.
    ///   - options: The options.
    /// - Throws: ``InterpreterError`` for a bad model, ``NetRunnerError`` for a model whose
    ///   input is not an image or whose labels do not fit.
    public convenience init(modelPath: String, labelsPath: String? = nil, options: Options = Options()) throws {
        try Self.validate(options)
        let interpreter = try Interpreter(modelPath: modelPath, options: Self.interpreterOptions(options))
        let classCount = try Self.classCount(interpreter, model: modelPath)
        var labels = try labelsPath.map { path throws(NetRunnerError) in
            try LabelMap(contentsOfFile: path, classCount: classCount)
        }
        var options = options
        var calibration: ScoreCalibration?
        // A model carrying TFLite metadata needs no flags: its normalisation and packed labels.
        if let buffer = interpreter.modelMetadata() {
            let metadata = try TFLiteMetadata(buffer, source: modelPath)
            if options.normalization == nil, try interpreter.input(at: 0).dataType == .float32,
                let normalization = metadata.inputs.first?.normalization
            {
                options.normalization = ImagePreprocessing.Normalization(
                    mean: normalization.mean, std: normalization.std)
            }
            var packed = PackedFiles.Reader(modelPath: modelPath)
            if labels == nil, let file = metadata.outputs.first?.labelsFile() {
                labels = try LabelMap(
                    text: try packed.text(of: file, what: "labels file"), source: "\(modelPath):\(file.name)",
                    classCount: classCount)
            }
            // The metadata's threshold applies unless the options set one (the Task Library's rule).
            if options.scoreThreshold == 0, let threshold = metadata.outputs.first?.scoreThreshold, threshold.isFinite {
                options.scoreThreshold = threshold
            }
            if let output = metadata.outputs.first, let calibrationOptions = output.scoreCalibration,
                let file = output.associatedFiles.first(where: { $0.type == .tensorAxisScoreCalibration })
            {
                calibration = try ScoreCalibration(
                    text: try packed.text(of: file, what: "calibration file"),
                    transformation: calibrationOptions.transformation,
                    defaultScore: calibrationOptions.defaultScore, source: "\(modelPath):\(file.name)")
            }
        }
        try self.init(interpreter: interpreter, labels: labels, options: options, model: modelPath)
        self.calibration = calibration
    }

    /// Creates a classifier from a TensorIO / Net Runner model bundle: the description gives
    /// the channel order, the normalisation and the labels, as in Net Runner.
    ///
    /// - Parameters:
    ///   - bundle: The bundle.
    ///   - options: The options; the description's channel order and normalisation replace
    ///     theirs, and a labels file in the description is used.
    /// - Throws: ``ModelBundleError`` when the description does not match the model,
    ///   ``NetRunnerError/notAnImageModel(model:reason:)`` when its first input is not an image.
    public convenience init(bundle: ModelBundle, options: Options = Options()) throws {
        let description = bundle.description
        let options = try Self.options(options, applying: description, model: bundle.path)
        let labelsPath = try description.outputs.first?.labels.map { name throws(ModelBundleError) in
            try bundle.assetPath(name)
        }
        let modelPath = try bundle.modelPath
        try Self.validate(options)
        let interpreter = try Interpreter(modelPath: modelPath, options: Self.interpreterOptions(options))
        let classCount = try Self.classCount(interpreter, model: bundle.path)
        try bundle.check(against: interpreter)
        let labels = try labelsPath.map { path throws(NetRunnerError) in
            try LabelMap(contentsOfFile: path, classCount: classCount)
        }
        try self.init(interpreter: interpreter, labels: labels, options: options, model: bundle.path)
    }

    /// Creates a classifier from a model and its description held in memory (an embedded
    /// bundle): the description gives the channel order and normalisation.
    ///
    /// - Parameters:
    ///   - modelData: The bytes of the `.tflite` model.
    ///   - description: Its `model.json`.
    ///   - labels: The labels of its classes, or `nil`.
    ///   - options: The options; the description's channel order and normalisation replace theirs.
    /// - Throws: The errors of ``init(bundle:options:)``.
    public convenience init(
        modelData: Data, description: ModelDescription, labels: LabelMap?, options: Options = Options()
    ) throws {
        let options = try Self.options(options, applying: description, model: description.name)
        try self.init(modelData: modelData, labels: labels, options: options, name: description.name)
    }

    /// The options with a description's channel order and normalisation.
    private static func options(
        _ options: Options, applying description: ModelDescription, model: String
    ) throws -> Options {
        guard let input = description.inputs.first, input.kind == .image else {
            throw NetRunnerError.notAnImageModel(model: model, reason: "model.json's first input is not an image layer")
        }
        var options = options
        options.channelOrder = input.format == "BGR" ? .bgr : .rgb
        if let normalize = input.normalize {
            options.normalization = ImagePreprocessing.Normalization(normalize)
        }
        return options
    }

    /// Creates a classifier from a model held in memory.
    ///
    /// - Parameters:
    ///   - modelData: The bytes of a `.tflite` image classification model.
    ///   - labels: The labels of its classes, or `nil` for indices only.
    ///   - options: The options.
    ///   - name: The model's name, used in errors.
    /// - Throws: ``InterpreterError`` for a bad model, ``NetRunnerError`` for a model whose
    ///   input is not an image or whose labels do not fit.
    public convenience init(
        modelData: Data, labels: LabelMap?, options: Options = Options(), name: String = "model data"
    ) throws {
        try Self.validate(options)
        let interpreter = try Interpreter(modelData: modelData, options: Self.interpreterOptions(options))
        let classCount = try Self.classCount(interpreter, model: name)
        if let labels, labels.count != classCount {
            throw NetRunnerError.labelCountMismatch(file: "labels", labels: labels.count, classes: classCount)
        }
        try self.init(interpreter: interpreter, labels: labels, options: options, model: name)
    }

    private init(interpreter: Interpreter, labels: LabelMap?, options: Options, model: String) throws {
        self.preprocessing = try ImagePreprocessing(
            input: try interpreter.input(at: 0), cropping: options.cropping, normalization: options.normalization,
            channelOrder: options.channelOrder, model: model)
        self.tensorizer = try ImageTensorizer(preprocessing: preprocessing)
        self.interpreter = interpreter
        self.labels = labels
        self.options = options
        self.modelName = model
        self.filter = try CategoryFilter(
            allowlist: options.categoryAllowlist, denylist: options.categoryDenylist, labels: labels)
    }

    private static func validate(_ options: Options) throws(NetRunnerError) {
        guard options.maxResults > 0 else {
            throw .invalidOption(name: "maxResults", reason: "must be 1 or more, found \(options.maxResults)")
        }
        guard options.scoreThreshold.isFinite else {
            throw .invalidOption(name: "scoreThreshold", reason: "must be a number")
        }
    }

    private static func interpreterOptions(_ options: Options) -> Interpreter.Options {
        var interpreterOptions = Interpreter.Options()
        interpreterOptions.threadCount = options.threadCount
        return interpreterOptions
    }

    /// Allocates the tensors and returns the number of classes of output 0.
    private static func classCount(_ interpreter: Interpreter, model: String) throws -> Int {
        try interpreter.allocateTensors()
        guard interpreter.inputTensorCount >= 1, interpreter.outputTensorCount >= 1 else {
            throw NetRunnerError.notAnImageModel(model: model, reason: "it has no input or no output")
        }
        // The input is checked first: "not an image model" is the more useful message.
        _ = try ImagePreprocessing(input: try interpreter.input(at: 0), cropping: .centerSquare, model: model)
        let output = try interpreter.output(at: 0)
        let shape = output.shape.dimensions
        guard let classes = shape.last, classes > 0, shape.dropLast().allSatisfy({ $0 == 1 }),
            [.float32, .uInt8, .int8].contains(output.dataType)
        else {
            throw NetRunnerError.unsupportedOutputs(
                model: model,
                reason: "output 0 is \(output.dataType) \(output.shape); "
                    + "a classifier's is [1, classes] of float32, uint8 or int8")
        }
        return classes
    }

    /// Classifies the image file at `path`.
    ///
    /// - Parameter path: A JPEG, PNG, BMP or PNM file.
    /// - Returns: The best categories and the time each stage took.
    /// - Throws: ``ImageError`` for a missing, unreadable or corrupt image.
    public func classify(fileAt path: String) throws -> ClassificationResult {
        let clock = ContinuousClock()
        let start = clock.now
        let image = try ImageDecoder.decode(contentsOf: path, options: decodingOptions)
        return try classify(image, decodeTime: clock.now - start)
    }

    /// Classifies an encoded image held in memory.
    ///
    /// - Parameter data: The bytes of a JPEG, PNG, BMP or PNM file.
    /// - Returns: The best categories and the time each stage took.
    /// - Throws: ``ImageError`` for corrupt or unsupported data.
    public func classify(data: Data) throws -> ClassificationResult {
        let clock = ContinuousClock()
        let start = clock.now
        let image = try ImageDecoder.decode(data: data, options: decodingOptions)
        return try classify(image, decodeTime: clock.now - start)
    }

    /// Classifies a decoded image (a camera frame, for example).
    ///
    /// - Parameter pixels: The image, in any pixel format.
    /// - Returns: The best categories and the time each stage took.
    /// - Throws: ``ImageError`` for an empty image.
    public func classify(_ pixels: PixelBuffer) throws -> ClassificationResult {
        try run(pixels, originalSize: pixels.size, decodeTime: .zero)
    }

    /// Classifies an image the decoder returned.
    ///
    /// - Parameters:
    ///   - image: The decoded image.
    ///   - decodeTime: How long decoding took, reported in the result.
    /// - Returns: The best categories and the time each stage took.
    /// - Throws: ``ImageError`` for an empty image.
    public func classify(_ image: DecodedImage, decodeTime: Duration = .zero) throws -> ClassificationResult {
        try run(image.pixels, originalSize: image.orientedSize, decodeTime: decodeTime)
    }

    /// Classifies an image already turned into this model's input (by an ``ImagePrefetcher``
    /// given this classifier's ``preprocessing``).
    ///
    /// - Parameters:
    ///   - prepared: The prepared input.
    ///   - decodeTime: How long decoding took, reported in the result.
    /// - Returns: The best categories and the time each stage took.
    /// - Throws: ``InterpreterError/invalidTensorDataCount(provided:required:)`` when the
    ///   input was prepared for another model.
    public func classify(_ prepared: PreparedImage, decodeTime: Duration = .zero) throws -> ClassificationResult {
        let clock = ContinuousClock()
        let start = clock.now
        try interpreter.copy(prepared.input, toInputAt: preprocessing.inputIndex)
        return try finish(preprocessingTime: prepared.preprocessingTime + (clock.now - start), decodeTime: decodeTime)
    }

    private func run(_ pixels: PixelBuffer, originalSize: PixelSize, decodeTime: Duration) throws
        -> ClassificationResult
    {
        let clock = ContinuousClock()
        let start = clock.now
        try tensorizer.prepare(pixels, originalSize: originalSize)
        try interpreter.copy(tensorizer.input, toInputAt: preprocessing.inputIndex)
        return try finish(preprocessingTime: clock.now - start, decodeTime: decodeTime)
    }

    /// Runs the model on the input already copied in and reads the answer.
    private func finish(preprocessingTime: Duration, decodeTime: Duration) throws -> ClassificationResult {
        let clock = ContinuousClock()
        let prepared = clock.now
        try interpreter.invoke()
        let output = try interpreter.output(at: 0)
        let ran = clock.now
        return ClassificationResult(
            categories: categories(from: output),
            decodingMilliseconds: decodeTime.inMilliseconds,
            preprocessingMilliseconds: preprocessingTime.inMilliseconds,
            inferenceMilliseconds: (ran - prepared).inMilliseconds)
    }

    /// The decoding options for this model: downscale JPEGs no further than the input needs.
    public var decodingOptions: DecodingOptions {
        preprocessing.decodingOptions(
            maximumPixelCount: options.maximumPixelCount, scalesWhileDecoding: options.scalesWhileDecoding)
    }

    /// The best categories in an output tensor, after dequantization, softmax and filters.
    func categories(from output: Tensor) -> [Category] {
        var scores: [Float]
        switch output.dataType {
        case .uInt8:
            let parameters = output.quantizationParameters ?? QuantizationParameters(scale: 1 / 255, zeroPoint: 0)
            scores = Scores.dequantize(output.data, scale: parameters.scale, zeroPoint: parameters.zeroPoint)
        case .int8:
            let parameters = output.quantizationParameters ?? QuantizationParameters(scale: 1 / 256, zeroPoint: -128)
            scores = Scores.dequantize(
                output.data.lazy.map { Int8(bitPattern: $0) }, scale: parameters.scale, zeroPoint: parameters.zeroPoint)
        default:
            scores = output.data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            let logits =
                options.outputsLogits
                ?? (scores.contains { $0 < 0 || $0 > 1 } || abs(scores.reduce(0, +) - 1) > 0.05)
            if logits { scores = Scores.softmax(scores) }
        }
        if let calibration {
            scores = scores.enumerated().map { calibration.calibrate($0.element, index: $0.offset) }
        }
        let filter = self.filter
        let indices = Scores.topK(scores, k: options.maxResults, threshold: options.scoreThreshold) { index in
            filter.includes(index)
        }
        return indices.map { index in
            Category(index: index, score: scores[index], label: labels?[index], displayName: labels?.displayName(index))
        }
    }

}

/// What a classifier found in one image, and how long each stage took (Net Runner reports
/// `preprocessor_latency` and `inference_latency`).
public struct ClassificationResult: Equatable, Hashable, Sendable, Codable {
    /// The best categories, highest score first.
    public var categories: [Category]
    /// Milliseconds spent decoding the file (0 for pixels given directly).
    public var decodingMilliseconds: Double
    /// Milliseconds spent cropping, resizing and converting the image to the input tensor.
    public var preprocessingMilliseconds: Double
    /// Milliseconds spent in the runtime, including reading the output.
    public var inferenceMilliseconds: Double

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - categories: The best categories.
    ///   - decodingMilliseconds: Decoding time.
    ///   - preprocessingMilliseconds: Preprocessing time.
    ///   - inferenceMilliseconds: Inference time.
    public init(
        categories: [Category], decodingMilliseconds: Double, preprocessingMilliseconds: Double,
        inferenceMilliseconds: Double
    ) {
        self.categories = categories
        self.decodingMilliseconds = decodingMilliseconds
        self.preprocessingMilliseconds = preprocessingMilliseconds
        self.inferenceMilliseconds = inferenceMilliseconds
    }
}
