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
        guard let input = description.inputs.first, input.kind == .image else {
            throw NetRunnerError.notAnImageModel(
                model: bundle.path, reason: "model.json's first input is not an image layer")
        }
        var options = options
        if options.normalization == nil, let normalize = input.normalize {
            options.normalization = ImagePreprocessing.Normalization(normalize)
        }
        let labelsFile = description.outputs.lazy.compactMap(\.labels).first
        let labels = try labelsFile.map { name in try LabelMap(contentsOfFile: try bundle.assetPath(name)) }
        var interpreterOptions = Interpreter.Options()
        interpreterOptions.threadCount = options.threadCount
        let interpreter = try Interpreter(modelPath: try bundle.modelPath, options: interpreterOptions)
        try interpreter.allocateTensors()
        try bundle.check(against: interpreter)
        try self.init(
            interpreter: interpreter, labels: labels, options: options, model: bundle.path,
            metadataNames: description.outputs.map(\.name))
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
