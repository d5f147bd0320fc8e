import FoundationEssentials
import NetRunnerImage
import NetRunnerSupport
import TensorFlowLite

/// Turns an image into an embedding: a vector that is near another image's when the two look
/// alike, for search, near-duplicates and imprinting (MediaPipe Tasks' `ImageEmbedder`).
///
///     var options = ImageEmbedder.Options()
///     options.l2Normalize = true
///     let embedder = try ImageEmbedder(modelPath: "mobilenet_v1_1.0_224_quant_embedding_extractor.tflite",
///                                      options: options)
///     let cat = try embedder.run(.file("cat.jpg")), dog = try embedder.run(.file("dog.jpg"))
///     print(try ImageEmbedder.cosineSimilarity(cat, dog))
///
/// The model's first output is the embedding, whatever its shape (`[1, N]`, or `[1, 1, 1, N]`
/// for a pooled feature map such as Coral's embedding extractors), dequantized when it is
/// quantized. The whole image is resized to the input (no crop, as Coral's imprinting does);
/// decoding, preprocessing and accelerators are every task's (``VisionTaskCore``).
///
/// - Note: Not thread-safe (it owns an ``Interpreter``); create one per thread.
public final class ImageEmbedder: VisionTask, CoreBackedVisionTask {
    /// Options of an embedder: the ``BaseOptions`` and MediaPipe's `l2_normalize` and
    /// `quantize` (no answer options: ``VisionTaskOptions/apply(_:)`` sets nothing, as an
    /// embedding has no classes to cut or filter).
    public struct Options: VisionTaskOptions {
        /// Threads, accelerator, error logging and decoding (``BaseOptions``).
        public var baseOptions = BaseOptions()

        /// Whether the embedding is divided by its length (unit norm), as MediaPipe's
        /// `l2_normalize`; off by default, as there: the model's values as they come.
        public var l2Normalize = false

        /// Whether the embedding is also given as signed bytes (MediaPipe's `quantize`), in
        /// ``EmbeddingResult/quantizedEmbedding``, beside the floats.
        ///
        /// Each value times 128, rounded half away from zero, clamped to -128...127, as
        /// MediaPipe's `TensorsToEmbeddingsCalculator` does. It assumes values within -1...1,
        /// which ``l2Normalize`` makes sure of.
        public var quantize = false

        /// Creates the default options.
        public init() {}
    }

    /// ``ImageTask/Kind/embedding``.
    public static var kind: ImageTask.Kind { .embedding }

    /// The options the embedder was created with.
    public let options: Options
    /// `nil`: an embedding has no labels.
    public var labels: LabelMap? { nil }
    /// The number of values in each embedding.
    public let dimension: Int

    let core: VisionTaskCore
    private let headName: String

    /// Creates an embedder for a loaded model.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - options: The options.
    /// - Throws: ``InterpreterError`` for a bad model, ``NetRunnerError/notAnImageModel(model:reason:)``
    ///   for an input that is not an image, ``NetRunnerError/unsupportedOutputs(model:reason:)``
    ///   naming the outputs for a first output that is not a vector of numbers.
    public init(model: LoadedModel, options: Options = Options()) throws {
        let (interpreter, core) = try VisionTaskCore.imageTask(
            for: model, options: options, taskDefaults: .init(cropping: .stretch))
        let output = try interpreter.output(at: 0)
        let dimensions = output.shape.dimensions
        // One vector: every dimension but the last is 1 (a batch of one, a 1x1 pooled map).
        let isVector =
            dimensions.count >= 1 && dimensions.dropLast().allSatisfy { $0 == 1 } && dimensions.last ?? 0 >= 2
        guard isVector, [.float32, .uInt8, .int8].contains(output.dataType) else {
            throw NetRunnerError.unsupportedOutputs(
                model: model.name,
                reason: "an image embedder needs a first output that is one vector of numbers ([1, N] or "
                    + "[1, 1, 1, N], float32 or 8-bit); this model outputs \(output.dataType) \(dimensions)")
        }
        self.core = core
        self.options = options
        self.dimension = dimensions.last ?? 0
        self.headName = output.name
    }

    /// Embeds an image in any form (file, bytes, pixels, decoded or prepared).
    ///
    /// - Parameter image: The image.
    /// - Returns: The embedding and the time each stage took.
    /// - Throws: ``ImageError`` for an unreadable image, ``InterpreterError`` from the runtime.
    public func run(_ image: ImageInput) throws -> EmbeddingResult {
        let run = try core.run(image)
        let clock = ContinuousClock()
        let start = clock.now
        var values = try core.interpreter.output(at: 0).dequantizedValues()
        if options.l2Normalize { values = Self.l2Normalized(values) }
        // The bytes beside the floats, which stay as they are (MediaPipe answers one or the
        // other; a results line carries both).
        let quantized = options.quantize ? values.map(Self.quantized) : nil
        return EmbeddingResult(
            embedding: values, quantizedEmbedding: quantized, headName: headName,
            imageSize: run.transform.imageSize, timings: run.timings(postprocessing: clock.now - start))
    }

    /// The cosine of the angle between two embeddings (MediaPipe's
    /// `ImageEmbedder.cosine_similarity`): 1 for the same direction, 0 for unrelated, -1 for
    /// opposite.
    ///
    /// - Parameters:
    ///   - u: An embedding.
    ///   - v: Another, of the same length.
    /// - Returns: The cosine similarity.
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` for embeddings of different
    ///   lengths or one of length zero (no direction).
    public static func cosineSimilarity(_ u: [Float], _ v: [Float]) throws -> Double {
        guard u.count == v.count, !u.isEmpty else {
            throw NetRunnerError.invalidOption(
                name: "embedding",
                reason: "cannot compare embeddings of different lengths (\(u.count) and \(v.count) values)")
        }
        var (dot, uu, vv) = (0.0, 0.0, 0.0)
        for index in u.indices {
            let (a, b) = (Double(u[index]), Double(v[index]))
            dot += a * b
            uu += a * a
            vv += b * b
        }
        guard uu > 0, vv > 0 else {
            throw NetRunnerError.invalidOption(
                name: "embedding", reason: "an embedding of zero length has no direction")
        }
        return dot / (uu.squareRoot() * vv.squareRoot())
    }

    /// The cosine similarity of two answers' embeddings (their bytes when both are quantized,
    /// as MediaPipe compares quantized embeddings).
    ///
    /// - Parameters:
    ///   - u: An answer.
    ///   - v: Another.
    /// - Returns: The cosine similarity.
    /// - Throws: As ``cosineSimilarity(_:_:)-([Float],[Float])``.
    public static func cosineSimilarity(_ u: EmbeddingResult, _ v: EmbeddingResult) throws -> Double {
        if let a = u.quantizedEmbedding, let b = v.quantizedEmbedding {
            return try cosineSimilarity(a.map(Float.init), b.map(Float.init))
        }
        return try cosineSimilarity(u.embedding, v.embedding)
    }

    /// The values divided by their Euclidean length (unchanged when it is zero).
    ///
    /// - Parameter values: The values.
    /// - Returns: A unit vector in the same direction.
    public static func l2Normalized(_ values: [Float]) -> [Float] {
        let norm = values.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
        guard norm > 0, norm.isFinite else { return values }
        return values.map { $0 / norm }
    }

    /// A value in -1...1 as a signed byte: times 128, rounded, clamped (MediaPipe's scalar
    /// quantization).
    private static func quantized(_ value: Float) -> Int8 {
        guard value.isFinite else { return 0 }
        return Int8(max(-128, min(127, (value * 128).rounded())))
    }
}

extension ImageTask.Options {
    /// These options as an ``ImageEmbedder``'s (see ``taskOptions(_:)``).
    public var embedderOptions: ImageEmbedder.Options { taskOptions() }
}
