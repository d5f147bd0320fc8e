public import FoundationEssentials
import TensorFlowLite

extension ObjectDetector {
    /// Creates a detector from a TensorIO / Net Runner model bundle: the description gives the
    /// input normalisation, the output names (matched against the Task Library's `location`,
    /// `category`, `score`, `number of detections`) and the class labels (the first output
    /// layer with a `labels` file).
    ///
    /// - Parameters:
    ///   - bundle: The bundle.
    ///   - options: The options; the description's normalisation is used when
    ///     `options.normalization` is `nil`.
    /// - Throws: ``ModelBundleError`` when the description does not match the model,
    ///   ``NetRunnerError`` when its first input is not an image or its outputs are not a
    ///   detector's.
    public convenience init(bundle: ModelBundle, options: Options = Options()) throws {
        let description = bundle.description
        let options = try Self.options(options, applying: description, model: bundle.path)
        let labelsFile = description.outputs.lazy.compactMap(\.labels).first
        let labels = try labelsFile.map { name in try LabelMap(contentsOfFile: try bundle.assetPath(name)) }
        let interpreter = try Interpreter(modelPath: try bundle.modelPath, options: Self.interpreterOptions(options))
        try interpreter.allocateTensors()
        try bundle.check(against: interpreter)
        try self.init(
            interpreter: interpreter, labels: labels, options: options, model: bundle.path,
            metadataNames: description.outputs.map(\.name))
    }

    /// Creates a detector from a model and its description held in memory (an embedded
    /// bundle): the description gives the input normalisation and the output names.
    ///
    /// - Parameters:
    ///   - modelData: The bytes of the `.tflite` model.
    ///   - description: Its `model.json`.
    ///   - labels: The labels of its classes, or `nil`.
    ///   - options: The options; the description's normalisation is used when
    ///     `options.normalization` is `nil`.
    /// - Throws: The errors of ``init(bundle:options:)``.
    public convenience init(
        modelData: Data, description: ModelDescription, labels: LabelMap?, options: Options = Options()
    ) throws {
        let options = try Self.options(options, applying: description, model: description.name)
        let interpreter = try Interpreter(modelData: modelData, options: Self.interpreterOptions(options))
        try self.init(
            interpreter: interpreter, labels: labels, options: options, model: description.name,
            metadataNames: description.outputs.map(\.name))
    }

    /// The options with a description's input normalisation, unless they set their own.
    private static func options(
        _ options: Options, applying description: ModelDescription, model: String
    ) throws(NetRunnerError) -> Options {
        guard let input = description.inputs.first, input.kind == .image else {
            throw .notAnImageModel(model: model, reason: "model.json's first input is not an image layer")
        }
        var options = options
        if options.normalization == nil, let normalize = input.normalize {
            options.normalization = ImagePreprocessing.Normalization(normalize)
        }
        return options
    }
}

extension ImagePreprocessing.Normalization {
    /// The normalisation a TensorIO `normalize` transform describes.
    ///
    /// TensorIO computes `pixel * scale + bias[c]`, which is `(pixel - mean[c]) / std` with
    /// `mean[c] = -bias[c] / scale` and `std = 1 / scale`; the standard strings are exact.
    init(_ normalize: ModelDescription.Transform) {
        switch normalize.standard {
        case "[0,1]": self = .zeroToOne
        case "[-1,1]": self = .minusOneToOne
        default: self.init(mean: normalize.bias.map { -$0 / normalize.scale }, std: [1 / normalize.scale])
        }
    }
}
