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

    /// Writes a classifier bundle: the extractor with the imprinted layer, `assets/labels.txt`
    /// (the classes in order) and `model.json` (type `image.classification.imprinted`, the
    /// whole image stretched to the input).
    ///
    /// - Parameters:
    ///   - extractor: The embedding extractor the embeddings come from.
    ///   - classes: Each class's name and its photos' embeddings.
    ///   - scale: What the cosines are multiplied by before the softmax.
    ///   - path: The bundle folder to create; never overwritten.
    /// - Returns: The bundle.
    /// - Throws: ``NetRunnerError`` for classes without embeddings or a bad name,
    ///   ``ModelBundleError`` when `path` exists, ``NetRunnerError/unsupportedOutputs(model:reason:)``
    ///   for an extractor this cannot extend (no single vector output).
    @discardableResult
    public static func writeClassifier(
        extractor: LoadedModel, classes: [(name: String, embeddings: [[Float]])], scale: Float = defaultScale,
        to path: String
    ) throws -> ModelBundle {
        guard !classes.isEmpty else {
            throw NetRunnerError.invalidOption(name: "imprint", reason: "no classes: give a folder per class")
        }
        for (name, _) in classes where name.isEmpty || name.contains(where: \.isNewline) {
            throw NetRunnerError.invalidOption(name: "imprint", reason: "a class name must be one non-empty line")
        }
        guard scale.isFinite, scale > 0 else {
            throw NetRunnerError.invalidOption(name: "scale", reason: "\(scale) is not a positive number")
        }
        let weights = try classes.map { try classWeights($0.embeddings) }
        let bytes: [UInt8]
        do {
            bytes = try ImprintedModel.make(extractor: Array(extractor.modelData), weights: weights, scale: scale)
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
        return try ModelBundle.create(
            at: folder, modelPath: modelPath, labelsPath: labelsPath, type: "image.classification.imprinted",
            crop: .stretch,
            details: "Weight imprinting on \(extractor.name): "
                + "\(classes.count) classes "
                + "from their photos' mean embeddings: \(counts); scale \(scale).")
    }
}
