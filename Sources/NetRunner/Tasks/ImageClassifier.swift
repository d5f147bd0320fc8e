public import FoundationEssentials
public import NetRunnerImage
import NetRunnerSupport
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
/// Images are decoded (every pixel, equal to Pillow, unless ``BaseOptions/scalesWhileDecoding``),
/// turned upright, cropped and resized as ``Options/cropping`` says, converted to the input's
/// type, run, and the output is dequantized (and softmaxed for logits) into ``Category``
/// values. The model comes through ``LoadedModel``: a bundle's `model.json` or the model's
/// TFLite metadata give the channel order, normalisation, labels, score threshold and score
/// calibration, unless the options set them.
///
/// - Note: Not thread-safe (it owns an ``Interpreter``); create one per thread.
public final class ImageClassifier: BatchingVisionTask, CoreBackedVisionTask {
    /// Options of a classifier; the names are the Task Library's and MediaPipe's.
    public struct Options: VisionTaskOptions {
        /// The most categories to return (the best first); MediaPipe's `maxResults`.
        public var maxResults: Int = 5
        /// Categories scoring below this are left out; MediaPipe's `scoreThreshold`.
        ///
        /// `nil` (the default): the model's TFLite metadata threshold if it has one, else
        /// categories scoring 0 are left out, as MediaPipe's classifier leaves out those at or
        /// below its threshold (a uint8 model's top 5 is often padded with exact zeros). A value
        /// set here overrides the metadata's (the Task Library's rule); `0` keeps every category
        /// of the top ``maxResults``, zeros included: the top 5 of Python's `ai_edge_litert` and
        /// an argsort, as the Python reference and `evaluate` rank them.
        public var scoreThreshold: Float? = nil
        /// If not empty, only these labels are returned (full label or display name).
        public var categoryAllowlist: [String] = []
        /// These labels are never returned (full label or display name).
        public var categoryDenylist: [String] = []
        /// How images are fitted to the model input; `nil` (the default) leaves it to the
        /// model's description (`"crop"` of a bundle's image input), else the seed's centre crop.
        public var cropping: ImagePreprocessing.Cropping? = nil
        /// How pixels are normalised; `nil` leaves it to the model's description, else
        /// ``ImagePreprocessing``'s defaults.
        public var normalization: ImagePreprocessing.Normalization? = nil
        /// The tensor's channel order; `nil` leaves it to the model's description, else RGB.
        public var channelOrder: ImagePreprocessing.ChannelOrder? = nil
        /// Whether the output is logits needing a softmax; `nil` decides from the values
        /// (a float output with values outside [0, 1] or not summing to 1 is treated as logits).
        public var outputsLogits: Bool? = nil

        /// Threads, accelerator, error logging and decoding (``BaseOptions``).
        public var baseOptions = BaseOptions()

        /// Creates options with the defaults: top 5, the model's threshold (else no zero
        /// scores), one thread, the model's cropping (else the centre crop).
        public init() {}

        /// Sets the classifier's answer options: at most 5 categories and the model's own
        /// threshold (else no zero scores) unless given.
        ///
        /// - Parameter results: Which answers to report.
        public mutating func apply(_ results: ResultOptions) {
            maxResults = results.maxResults ?? 5
            scoreThreshold = results.scoreThreshold
            categoryAllowlist = results.categoryAllowlist
            categoryDenylist = results.categoryDenylist
        }

        /// The cropping, normalisation and channel order asked for.
        public var preprocessingChoices: ImagePreprocessing.Choices {
            .init(cropping: cropping, normalization: normalization, channelOrder: channelOrder)
        }
    }

    /// ``ImageTask/Kind/classification``.
    public static var kind: ImageTask.Kind { .classification }

    /// The options the classifier was created with.
    public let options: Options
    /// The labels of the model's classes, if known.
    public let labels: LabelMap?

    let core: VisionTaskCore
    /// The model, kept to make the batched interpreter on first use.
    private let model: LoadedModel
    /// The interpreter whose image input holds a batch, and its batch size; made on the first
    /// ``classify(batch:)`` (`nil` inside when the model's input cannot be resized).
    private var batched: (size: Int, interpreter: Interpreter?)?
    private let filter: CategoryFilter
    private let scoreThreshold: Float
    private let calibration: ScoreCalibration?

    /// Creates a classifier for a loaded model.
    ///
    /// What the options leave open comes from the model's description (see ``LoadedModel``):
    /// channel order and normalisation, labels, and, from TFLite metadata, the score threshold
    /// (when `options.scoreThreshold` is `nil`) and the score calibration.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - options: The options.
    /// - Throws: ``InterpreterError`` for a bad model, ``ModelBundleError`` for a description
    ///   that does not fit it, ``NetRunnerError`` for a model whose input is not an image,
    ///   whose output is not class scores, or whose labels do not fit.
    public init(model: LoadedModel, options: Options = Options()) throws {
        try Self.validate(options)
        // The input is checked first: "not an image model" is the more useful message.
        let (interpreter, core) = try VisionTaskCore.imageTask(
            for: model, options: options, taskDefaults: .init(cropping: .centerSquare))
        let classCount = try Self.classCount(try interpreter.output(at: 0), model: model.name)
        let labels = try model.labels(forOutput: 0, classCount: classCount)
        let output = model.metadata?.outputs.first
        // The metadata's threshold applies unless the options set one (the Task Library's rule);
        // with neither, only categories scoring above 0 (MediaPipe's: at or below is left out).
        let threshold: Float
        if let given = options.scoreThreshold {
            threshold = given
        } else if let recommended = output?.scoreThreshold, recommended.isFinite {
            threshold = recommended
        } else {
            threshold = .leastNonzeroMagnitude
        }
        var calibration: ScoreCalibration?
        if let output, let calibrationOptions = output.scoreCalibration,
            let file = output.associatedFiles.first(where: { $0.type == .tensorAxisScoreCalibration })
        {
            calibration = try ScoreCalibration(
                text: try model.packedText(file, what: "calibration file"),
                transformation: calibrationOptions.transformation, defaultScore: calibrationOptions.defaultScore,
                source: "\(model.modelFile):\(file.name)")
        }
        self.core = core
        self.model = model
        self.options = options
        self.labels = labels
        self.scoreThreshold = threshold
        self.calibration = calibration
        self.filter = try CategoryFilter(
            allowlist: options.categoryAllowlist, denylist: options.categoryDenylist, labels: labels)
    }

    private static func validate(_ options: Options) throws(NetRunnerError) {
        guard options.maxResults > 0 else {
            throw .invalidOption(name: "maxResults", reason: "must be 1 or more, found \(options.maxResults)")
        }
        guard options.scoreThreshold?.isFinite ?? true else {
            throw .invalidOption(name: "scoreThreshold", reason: "must be a number")
        }
    }

    /// The number of classes of a classifier's output, which must be [1, classes].
    private static func classCount(_ output: Tensor, model: String) throws(NetRunnerError) -> Int {
        let shape = output.shape.dimensions
        guard let classes = shape.last, classes > 0, shape.dropLast().allSatisfy({ $0 == 1 }),
            [.float32, .uInt8, .int8].contains(output.dataType)
        else {
            throw .unsupportedOutputs(
                model: model,
                reason: "output 0 is \(output.dataType) \(output.shape); "
                    + "a classifier's is [1, classes] of float32, uint8 or int8")
        }
        return classes
    }

    /// Classifies an image in any form (file, bytes, pixels, decoded or prepared).
    ///
    /// - Parameter image: The image.
    /// - Returns: The best categories and the time each stage took.
    /// - Throws: ``ImageError`` for an unreadable image, ``InterpreterError`` from the runtime.
    public func run(_ image: ImageInput) throws -> ClassificationResult {
        let run = try core.run(image)
        let categories = try categories(from: try core.interpreter.output(at: 0))
        return ClassificationResult(categories: categories, timings: run.timings())
    }

    /// Classifies the image file at `path` (a format of ``ImageDecoder/decodedFormats``); see ``run(_:)``.
    public func classify(fileAt path: String) throws -> ClassificationResult { try run(.file(path)) }

    /// Classifies an encoded image held in memory; see ``run(_:)``.
    public func classify(data: Data) throws -> ClassificationResult { try run(.data(data)) }

    /// Classifies pixels (a camera frame, for example); see ``run(_:)``.
    public func classify(_ pixels: PixelBuffer) throws -> ClassificationResult { try run(.pixels(pixels)) }

    /// Classifies several prepared images with one run of the model: what a GPU needs to be
    /// busy (one image at a time leaves most of it idle).
    ///
    /// The first call makes a second interpreter whose image input holds `capacity` images
    /// (the model's batch dimension resized, as LiteRT's non-strict resize allows for most
    /// models; resizing again would recompile, so its size stays). A smaller batch fills the
    /// free places with copies of its last image, whose answers are dropped; a larger one runs
    /// in pieces; a lone image, or a model that cannot be resized, runs on its own. Each
    /// answer equals the same image's alone within the accelerator's precision (bit for bit
    /// on the CPU).
    ///
    /// - Parameters:
    ///   - batch: Images prepared with this classifier's ``preprocessing`` (an
    ///     ``ImagePrefetcher`` makes them), with the time each took to decode.
    ///   - capacity: The batched interpreter's size, fixed by the first call (default: that
    ///     call's count).
    /// - Returns: One result per image, in order; each one's inference time is its share of the
    ///   batch's, and ``ClassificationResult/batch`` has the batch's size and whole time.
    /// - Throws: ``InterpreterError`` from the runtime.
    public func classify(
        batch: [(image: PreparedImage, decodeTime: Duration)], capacity: Int? = nil
    ) throws -> [ClassificationResult] {
        let size = max(1, capacity ?? batch.count)
        if batched == nil, size > 1 { batched = (size, try makeBatchedInterpreter(size: size)) }
        guard batch.count > 1, let batched, let interpreter = batched.interpreter else {
            return try batch.map { try run(.prepared($0.image, decodeTime: $0.decodeTime)) }
        }
        if batch.count > batched.size {
            return try stride(from: 0, to: batch.count, by: batched.size).flatMap { start in
                try classify(batch: Array(batch[start..<min(start + batched.size, batch.count)]))
            }
        }
        var input = Data(capacity: batched.size * (batch.first?.image.input.count ?? 0))
        for item in batch { input.append(item.image.input) }
        if let last = batch.last {
            for _ in batch.count..<batched.size { input.append(last.image.input) }
        }
        let clock = ContinuousClock()
        let start = clock.now
        try interpreter.copy(input, toInputAt: core.preprocessing.inputIndex)
        try interpreter.invoke()
        let output = try interpreter.output(at: 0)
        let all = try scores(from: output)
        let classes = all.count / batched.size
        let whole = clock.now - start
        let shared = InferenceBatch(size: batch.count, inferenceMilliseconds: whole.inMilliseconds)
        return try batch.enumerated().map { index, item in
            var result = ClassificationResult(
                categories: try categories(
                    fromScores: Array(all[(index * classes)..<((index + 1) * classes)]), type: output.dataType),
                timings: ResultTimings(
                    decoding: item.decodeTime.inMilliseconds,
                    preprocessing: item.image.preprocessingTime.inMilliseconds,
                    inference: (whole / batch.count).inMilliseconds))
            result.batch = shared
            return result
        }
    }

    /// Classifies several prepared images with one run of the model: ``classify(batch:capacity:)``.
    ///
    /// - Parameters:
    ///   - batch: Images prepared with this classifier's ``preprocessing``, with their decode times.
    ///   - capacity: The batched interpreter's size, fixed by the first call (`nil`: that call's count).
    /// - Returns: One result per image, in order.
    /// - Throws: ``InterpreterError`` from the runtime.
    public func run(
        batch: [(image: PreparedImage, decodeTime: Duration)], capacity: Int?
    ) throws -> [ClassificationResult] {
        try classify(batch: batch, capacity: capacity)
    }

    /// The classifier's interpreter with its image input resized to `size` images, or `nil` when
    /// the runtime refuses that or the output is not `[size, classes]`.
    private func makeBatchedInterpreter(size: Int) throws -> Interpreter? {
        let interpreter = try VisionTaskCore.interpreter(for: model, options: options)
        let index = core.preprocessing.inputIndex
        var dimensions = try interpreter.input(at: index).shape.dimensions
        guard !dimensions.isEmpty, dimensions[0] == 1 else { return nil }
        dimensions[0] = size
        do {
            try interpreter.resizeInput(at: index, to: Tensor.Shape(dimensions))
            try interpreter.allocateTensors()
        } catch {
            return nil
        }
        let single = try core.interpreter.output(at: 0).shape.dimensions
        guard try interpreter.output(at: 0).shape.dimensions == [size] + single.dropFirst() else { return nil }
        return interpreter
    }

    /// The best categories in an output tensor, after dequantization, softmax and filters.
    private func categories(from output: Tensor) throws -> [Category] {
        try categories(fromScores: try scores(from: output), type: output.dataType)
    }

    /// An output tensor's values as floats (dequantized; a float output as it is).
    private func scores(from output: Tensor) throws -> [Float] {
        switch output.dataType {
        case .uInt8:
            try output.dequantizedValues(fallback: QuantizationParameters(scale: 1 / 255, zeroPoint: 0))
        case .int8:
            try output.dequantizedValues(fallback: QuantizationParameters(scale: 1 / 256, zeroPoint: -128))
        default:
            try output.dequantizedValues()
        }
    }

    /// The best categories of one image's scores: softmax for a float model's logits,
    /// calibration, filters.
    private func categories(fromScores values: [Float], type: Tensor.DataType) throws -> [Category] {
        var scores = values
        if type != .uInt8, type != .int8 {
            let logits =
                options.outputsLogits
                ?? (scores.contains { $0 < 0 || $0 > 1 } || abs(scores.reduce(0, +) - 1) > 0.05)
            if logits { scores = Scores.softmax(scores) }
        }
        if let calibration {
            scores = scores.enumerated().map { calibration.calibrate($0.element, index: $0.offset) }
        }
        let filter = self.filter
        let indices = Scores.topK(scores, k: options.maxResults, threshold: scoreThreshold) { index in
            filter.includes(index)
        }
        return indices.map { index in
            Category(index: index, score: scores[index], label: labels?[index], displayName: labels?.displayName(index))
        }
    }
}
