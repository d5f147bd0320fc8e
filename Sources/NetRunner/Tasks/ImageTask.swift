public import NetRunnerImage
import TensorFlowLite

/// A vision model ready to run on images, whichever task it does: what bulk inference and
/// evaluation run, so they take any classifier or detector a user points them at.
///
///     let task = try ImageTask(modelAt: "Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")
///     let answer = try task.run(fileAt: "photo.jpg")
///
/// - Note: Like the interpreter under it, a task is used by one thread at a time; give each
///   thread its own.
public enum ImageTask {
    /// An image classifier.
    case classifier(ImageClassifier)
    /// An object detector.
    case detector(ObjectDetector)

    /// What a model does.
    public enum Kind: String, Equatable, Hashable, Sendable, Codable, CaseIterable {
        /// It names what the image shows (one output of class scores).
        case classification
        /// It finds objects and their boxes.
        case detection
    }

    /// How to load and run a model, whichever task it does.
    public struct Options: Equatable, Hashable, Sendable {
        /// The task, or `nil` to tell it from the model (its `model.json` type, else its outputs).
        public var kind: Kind? = nil
        /// CPU threads for the runtime.
        public var threadCount: Int = 1
        /// Categories kept per image by a classifier.
        public var maxResults: Int = 5
        /// Classifier categories scoring below this are left out.
        public var classificationThreshold: Float = 0
        /// Detections scoring below this are left out.
        public var detectionThreshold: Float = 0.5
        /// Detections kept per image, or `nil` for all above the threshold.
        public var maxDetections: Int? = nil
        /// Whether large JPEGs are scaled down while decoding (see
        /// ``ImageClassifier/Options/scalesWhileDecoding``).
        public var scalesWhileDecoding: Bool = true
        /// A labels file for a `.tflite` model without its own (ignored for bundles, whose
        /// description names their labels).
        public var labelsPath: String? = nil

        /// Creates the default options.
        public init() {}
    }

    /// Loads a model: a TensorIO bundle folder (`.tiobundle`, `.tfbundle`), a zipped bundle,
    /// or a `.tflite` file (its own metadata, else a `model.json` beside it, else defaults).
    ///
    /// The task comes from `options.kind`, else the description's `model.type`
    /// (`image.classification…`, `…detection…`), else the outputs: one output is a
    /// classifier, two (raw anchors) or four (boxes, classes, scores, count) a detector.
    ///
    /// - Parameters:
    ///   - path: The model.
    ///   - options: How to load and run it.
    /// - Throws: ``ModelBundleError``, ``InterpreterError`` or ``NetRunnerError`` naming the
    ///   model and what is wrong.
    public init(modelAt path: String, options: Options = Options()) throws {
        let resolved = try ResolvedModel(path: path, labelsPath: options.labelsPath)
        switch resolved.source {
        case .bundle(let bundle):
            try self.init(bundle: bundle, options: options)
        case .file(let path):
            let kind = try options.kind ?? Self.kind(outputCount: Self.outputCount(modelAt: path))
            switch kind {
            case .classification:
                self = .classifier(
                    try ImageClassifier(
                        modelPath: path, labelsPath: options.labelsPath, options: options.classifierOptions))
            case .detection:
                self = .detector(
                    try ObjectDetector(
                        modelPath: path, labelsPath: options.labelsPath, options: options.detectorOptions))
            }
        }
    }

    /// Loads a model bundle (see ``init(modelAt:options:)``).
    ///
    /// - Parameters:
    ///   - bundle: The bundle.
    ///   - options: How to load and run it.
    /// - Throws: The errors of ``init(modelAt:options:)``.
    public init(bundle: ModelBundle, options: Options = Options()) throws {
        let description = bundle.description
        let kind =
            options.kind ?? Self.kind(type: description.model.type)
            ?? Self.kind(outputCount: description.outputs.count)
        switch kind {
        case .classification:
            self = .classifier(try ImageClassifier(bundle: bundle, options: options.classifierOptions))
        case .detection:
            self = .detector(try ObjectDetector(bundle: bundle, options: options.detectorOptions))
        }
    }

    /// The task a TensorIO `model.type` names, if it names one.
    static func kind(type: String?) -> Kind? {
        guard let type = type?.lowercased() else { return nil }
        if type.hasPrefix("image.classification") { return .classification }
        if type.contains("detection") { return .detection }
        return nil
    }

    static func kind(outputCount: Int) -> Kind {
        outputCount == 1 ? .classification : .detection
    }

    private static func outputCount(modelAt path: String) throws -> Int {
        try Interpreter(modelPath: path).outputTensorCount
    }

    /// What the model does.
    public var kind: Kind {
        switch self {
        case .classifier: return .classification
        case .detector: return .detection
        }
    }

    /// How images are decoded for this model (JPEGs are scaled down while decoding when the
    /// model input is much smaller).
    public var decodingOptions: DecodingOptions {
        switch self {
        case .classifier(let classifier): return classifier.decodingOptions
        case .detector(let detector): return detector.decodingOptions
        }
    }

    /// How an image becomes the model's input.
    public var preprocessing: ImagePreprocessing {
        switch self {
        case .classifier(let classifier): return classifier.preprocessing
        case .detector(let detector): return detector.preprocessing
        }
    }

    /// The labels of the model's classes, if known.
    public var labels: LabelMap? {
        switch self {
        case .classifier(let classifier): return classifier.labels
        case .detector(let detector): return detector.labels
        }
    }

    /// Runs the model on an image file.
    ///
    /// - Parameter path: A JPEG, PNG, BMP or PNM file.
    /// - Returns: The answer and the time each stage took.
    /// - Throws: ``ImageError`` for an unreadable image, ``InterpreterError`` if the runtime fails.
    public func run(fileAt path: String) throws -> ImageAnswer {
        switch self {
        case .classifier(let classifier): return .classification(try classifier.classify(fileAt: path))
        case .detector(let detector): return .detection(try detector.detect(fileAt: path))
        }
    }

    /// Runs the model on an image already decoded and made into its input (by an
    /// ``ImagePrefetcher`` given this task's ``preprocessing``).
    ///
    /// - Parameters:
    ///   - prepared: The input.
    ///   - decodeTime: How long decoding took, for the answer's timings.
    /// - Returns: The answer and the time each stage took.
    /// - Throws: ``InterpreterError`` if the runtime fails.
    public func run(_ prepared: PreparedImage, decodeTime: Duration = .zero) throws -> ImageAnswer {
        switch self {
        case .classifier(let classifier):
            return .classification(try classifier.classify(prepared, decodeTime: decodeTime))
        case .detector(let detector):
            return .detection(try detector.detect(prepared, decodeTime: decodeTime))
        }
    }
}

extension ImageTask.Options {
    /// These options as an ``ImageClassifier``'s.
    public var classifierOptions: ImageClassifier.Options {
        var options = ImageClassifier.Options()
        options.threadCount = threadCount
        options.maxResults = maxResults
        options.scoreThreshold = classificationThreshold
        options.scalesWhileDecoding = scalesWhileDecoding
        return options
    }

    /// These options as an ``ObjectDetector``'s.
    public var detectorOptions: ObjectDetector.Options {
        var options = ObjectDetector.Options()
        options.threadCount = threadCount
        options.scoreThreshold = detectionThreshold
        options.maxResults = maxDetections
        options.scalesWhileDecoding = scalesWhileDecoding
        return options
    }
}

/// What a model answered for one image.
public enum ImageAnswer: Equatable, Hashable, Sendable {
    /// A classifier's categories.
    case classification(ClassificationResult)
    /// A detector's objects.
    case detection(DetectionResult)

    /// Milliseconds spent decoding the file.
    public var decodingMilliseconds: Double {
        switch self {
        case .classification(let result): return result.decodingMilliseconds
        case .detection(let result): return result.decodingMilliseconds
        }
    }

    /// Milliseconds spent turning the image into the model input.
    public var preprocessingMilliseconds: Double {
        switch self {
        case .classification(let result): return result.preprocessingMilliseconds
        case .detection(let result): return result.preprocessingMilliseconds
        }
    }

    /// Milliseconds spent in the runtime and reading its outputs (a detector's box decoding
    /// and suppression included).
    public var inferenceMilliseconds: Double {
        switch self {
        case .classification(let result): return result.inferenceMilliseconds
        case .detection(let result): return result.inferenceMilliseconds + result.postprocessingMilliseconds
        }
    }
}
