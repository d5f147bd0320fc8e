import FoundationEssentials
import NetRunnerSupport
import TensorFlowLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// New classes from a few photos each: weight imprinting (Qi, Brown and Lowe 2018; Coral's
/// imprinting engine), as a classifier any TFLite runtime runs.
///
///     let embedder = try ImageEmbedder(modelPath: "mobilenet_v1_1.0_224_quant_embedding_extractor.tflite")
///     let cats = try ["cat1.jpg", "cat2.jpg"].map { try embedder.run(.file($0)).embedding }
///     let dogs = try ["dog1.jpg"].map { try embedder.run(.file($0)).embedding }
///     try WeightImprinting.writeClassifier(
///         extractor: LoadedModel(.path("mobilenet_v1_1.0_224_quant_embedding_extractor.tflite")),
///         classes: [("cat", cats), ("dog", dogs)], to: "pets.tiobundle")
///
/// Each class's weights are the normalised mean of its photos' normalised embeddings; the
/// classifier is the extractor with `L2_NORMALIZATION`, `FULLY_CONNECTED` (those weights,
/// times ``defaultScale``) and `SOFTMAX` appended (``ImprintedModel``), in a bundle with its
/// labels, the whole image stretched to the input as the embeddings were made.
public enum WeightImprinting {
    /// What the cosines are multiplied by before the softmax: the paper's scale `s`, which
    /// turns cosines in -1...1 into scores that are not all alike (a cosine 0.3 above the
    /// next class's: about 95% of the score).
    public static let defaultScale: Float = 10

    /// A class's weights: the mean of its embeddings, each normalised first, normalised.
    ///
    /// - Parameter embeddings: The class's photos' embeddings, all of one length.
    /// - Returns: A unit vector.
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` for no embeddings, lengths that
    ///   differ, or embeddings that cancel out.
    public static func classWeights(_ embeddings: [[Float]]) throws -> [Float] {
        guard let dimension = embeddings.first?.count, dimension > 0, embeddings.allSatisfy({ $0.count == dimension })
        else {
            throw NetRunnerError.invalidOption(
                name: "imprint", reason: "a class needs at least one embedding, all of one length")
        }
        var sum = [Float](repeating: 0, count: dimension)
        for embedding in embeddings {
            let unit = ImageEmbedder.l2Normalized(embedding)
            for index in 0..<dimension { sum[index] += unit[index] }
        }
        let norm = sum.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
        guard norm > 0, norm.isFinite else {
            throw NetRunnerError.invalidOption(name: "imprint", reason: "a class's embeddings add up to nothing")
        }
        return sum.map { $0 / norm }
    }

    /// Refuses a class name the classifier's labels cannot carry whole: one that is empty
    /// after trimming Unicode white space (a folder named U+3000, the ideographic space), one
    /// of several lines, or one holding a comma (the labels' readers take `cat,black` for
    /// `cat`, so `cat,black` and `cat,white` would both answer `cat`).
    ///
    /// - Parameter name: The class name.
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` saying why.
    public static func checkClassName(_ name: String) throws {
        func refused(_ reason: String) -> NetRunnerError {
            .invalidOption(name: "imprint", reason: "the class name \"\(name)\" \(reason)")
        }
        if name.unicodeScalars.allSatisfy(\.properties.isWhitespace) {
            let scalars = name.unicodeScalars.prefix(8).map { "U+" + String($0.value, radix: 16, uppercase: true) }
            throw NetRunnerError.invalidOption(
                name: "imprint",
                reason: "a class name is empty but for white space (\(scalars.joined(separator: " ")))")
        }
        if name.contains(where: \.isNewline) { throw refused("is more than one line") }
        if name.contains(",") { throw refused("holds a comma, which the labels' readers end a name at") }
    }

    /// Writes a classifier bundle: the extractor with the imprinted layer, `assets/labels.txt`
    /// (the classes in order) and `model.json` (type `image.classification.imprinted`, the
    /// whole image stretched to the input).
    ///
    /// The `.tflite` carries TFLite metadata too (``TFLiteMetadataWriter``: the input an RGB
    /// image with the extractor's normalisation, the output's labels in a packed
    /// `labels.txt`), so that MediaPipe's `ImageClassifier` and the Task Library, which read no
    /// `model.json`, name the classes.
    ///
    /// - Parameters:
    ///   - extractor: The embedding extractor the embeddings come from.
    ///   - classes: Each class's name and its photos' embeddings.
    ///   - scale: What the cosines are multiplied by before the softmax.
    ///   - extractorName: How `model.json`'s details name the extractor (a catalog id, or an
    ///     absolute path); `nil`: the extractor's ``LoadedModel/name``.
    ///   - replacing: Whether a bundle already at `path` is replaced (the new one is written
    ///     whole beside it first, then swapped in); `false`: an existing `path` is refused.
    ///   - path: The bundle folder to create.
    /// - Returns: The bundle.
    /// - Throws: ``NetRunnerError`` for classes without embeddings or a bad name
    ///   (``checkClassName(_:)``),
    ///   ``ModelBundleError`` when `path` exists, ``NetRunnerError/unsupportedOutputs(model:reason:)``
    ///   for an extractor this cannot extend (no single vector output).
    @discardableResult
    public static func writeClassifier(
        extractor: LoadedModel, classes: [(name: String, embeddings: [[Float]])], scale: Float = defaultScale,
        extractorName: String? = nil, replacing: Bool = false, to path: String
    ) throws -> ModelBundle {
        guard !classes.isEmpty else {
            throw NetRunnerError.invalidOption(name: "imprint", reason: "no classes: give a folder per class")
        }
        for (name, _) in classes { try checkClassName(name) }
        guard scale.isFinite, scale > 0 else {
            throw NetRunnerError.invalidOption(name: "scale", reason: "\(scale) is not a positive number")
        }
        let weights = try classes.map { try classWeights($0.embeddings) }
        let bytes: [UInt8]
        do {
            let labels = classes.map(\.name)
            let metadata = TFLiteMetadataWriter.metadata(
                Self.metadata(labels: labels, extractor: extractor, scale: scale))
            bytes = try ImprintedModel.make(
                extractor: Array(extractor.modelData), weights: weights, scale: scale, metadata: metadata,
                packedFiles: [(TFLiteMetadataWriter.labelsFile, TFLiteMetadataWriter.labelsText(labels))])
        } catch let failure as ImprintedModel.Failure {
            throw NetRunnerError.unsupportedOutputs(
                model: extractor.name, reason: "cannot append an imprinted layer: \(failure.description)")
        }
        // The model and labels beside the bundle, then the bundle (itself written whole).
        let folder = path.hasSuffix("/") ? String(path.dropLast()) : path
        let parent = folder.contains("/") ? String(folder[..<(folder.lastIndex(of: "/") ?? folder.endIndex)]) : "."
        var template = Array((parent + "/.netrunner-imprint-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ModelBundleError.notABundle(path: folder, reason: "cannot write beside it")
        }
        let staging = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: staging) }
        var stem = folder.split(separator: "/").last.map(String.init) ?? "imprinted"
        if stem.hasSuffix(".tiobundle") { stem.removeLast(".tiobundle".count) }
        let modelPath = staging + "/" + (stem.isEmpty ? "imprinted" : stem) + ".tflite"
        try FileIO.writeAtomically(Data(bytes), to: modelPath)
        let labelsPath = staging + "/labels.txt"
        try FileIO.writeAtomically(Data(classes.map(\.name).joined(separator: "\n").utf8 + [10]), to: labelsPath)
        let counts = classes.map { "\($0.name) (\($0.embeddings.count))" }.joined(separator: ", ")
        let replaces = replacing && access(folder, F_OK) == 0
        if replaces, access(folder + "/model.json", F_OK) != 0 {
            throw ModelBundleError.notABundle(path: folder, reason: "it holds no model.json, so it is not replaced")
        }
        // A bundle replaced is written whole under the staging folder first, by the same name.
        let name = folder.split(separator: "/").last.map(String.init) ?? folder
        let target = replaces ? staging + "/new/" + name : folder
        if replaces {
            try FileManager.default.createDirectory(atPath: staging + "/new", withIntermediateDirectories: false)
        }
        let bundle = try ModelBundle.create(
            at: target, modelPath: modelPath, labelsPath: labelsPath, type: "image.classification.imprinted",
            crop: .stretch,
            details: "Weight imprinting on \(extractorName ?? extractor.name): "
                + "\(classes.count) classes "
                + "from their photos' mean embeddings: \(counts); scale \(scale).")
        guard replaces else { return bundle }
        // The old bundle moved aside (removed with the staging folder), the new one into place;
        // the old one back if that fails.
        guard rename(folder, staging + "/old") == 0 else {
            throw ModelBundleError.notABundle(path: folder, reason: "cannot move it aside to replace it")
        }
        guard rename(target, folder) == 0 else {
            _ = rename(staging + "/old", folder)
            throw ModelBundleError.notABundle(path: folder, reason: "cannot put the new bundle in its place")
        }
        return try ModelBundle(path: folder)
    }

    /// What the classifier's TFLite metadata says: its classes and the extractor's input
    /// normalisation.
    ///
    /// The normalisation is the extractor's metadata's, else an 8-bit input's quantization,
    /// else its `model.json`'s, else `[0,1]`. Nothing says where the extractor was read from,
    /// so that the bytes are the same from its `.tflite` and from its bundle, on any machine.
    private static func metadata(labels: [String], extractor: LoadedModel, scale: Float)
        -> TFLiteMetadataWriter.Classifier
    {
        var classifier = TFLiteMetadataWriter.Classifier(
            name: "Imprinted classifier (\(labels.count) classes)",
            description: "NetRunner weight imprinting: \(labels.count) classes, scale \(scale); "
                + "the whole image stretched to the input.",
            labels: labels)
        if let normalization = extractor.metadata?.inputs.first?.normalization {
            (classifier.mean, classifier.std) = (normalization.mean, normalization.std)
        } else if let input = try? Self.firstInput(of: extractor),
            [.uInt8, .int8].contains(input.dataType), let quantization = input.quantizationParameters,
            quantization.scale > 0, quantization.scale.isFinite
        {
            // An 8-bit input's own float contract: (byte - zero point) * scale. Readers of
            // 8-bit inputs (MediaPipe, the Task Library) feed the bytes as they are.
            let zeroPoint = Float(quantization.zeroPoint) + (input.dataType == .int8 ? 128 : 0)
            (classifier.mean, classifier.std) = ([zeroPoint], [1 / quantization.scale])
        } else if let transform = extractor.description?.inputs.first?.normalize, transform.scale != 0 {
            // value * scale + bias = (value - mean) / std: std = 1 / scale, mean = -bias / scale.
            classifier.std = [1 / transform.scale]
            classifier.mean = transform.bias.map { -$0 / transform.scale }
        }
        return classifier
    }

    /// The extractor's input tensor (the model was run already: it passed the model gate).
    private static func firstInput(of extractor: LoadedModel) throws -> Tensor {
        let interpreter = try Interpreter(modelData: extractor.modelData)
        try interpreter.allocateTensors()
        return try interpreter.input(at: 0)
    }
}
