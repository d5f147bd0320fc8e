import NetRunnerImage
import NetRunnerSupport
import TensorFlowLite

/// The image embedder as a registered task: ``ImageEmbedder`` and ``EmbeddingResult``.
///
/// Its part of a results line is `inference_results.embedding`, MediaPipe's embedding of one
/// head: `{"head_index": 0, "head_name", "float_embedding": [...]}`, and
/// `"quantized_embedding": [...]` (signed bytes) beside the floats when the embedder
/// quantizes (MediaPipe gives the bytes instead of the floats); beside it
/// `image_width` and `image_height`.
struct EmbeddingDefinition: LibraryTaskDefinition {
    typealias Task = ImageEmbedder

    static let names = TaskNames(
        kind: .embedding, verb: "embed", model: "image embedder", withArticle: "an image embedder")

    var resultsSchema: String {
        #"""
        {"type": "object", "description": "MediaPipe's embedding of one head.",
          "required": ["head_index", "head_name", "float_embedding"], "additionalProperties": false, "properties": {
            "head_index": {"type": "integer", "minimum": 0},
            "head_name": {"type": "string", "description": "The output the embedding was read from."},
            "float_embedding": {"type": "array", "items": {"type": "number"}, "description": "The output dequantized; unit length with l2Normalize; the same with quantize."},
            "quantized_embedding": {"type": "array", "items": {"type": "integer", "minimum": -128, "maximum": 127},
              "description": "With quantize, beside float_embedding: each value of float_embedding times 128, rounded half away from zero, clamped to -128...127 (MediaPipe's signed bytes)."}}}
        """#
    }
    var namesClasses: Bool { false }
    var assumedPreprocessing: String {
        "RGB, the whole image stretched to the input (no crop, as Coral's imprinting), the input's own "
            + "quantization for 8-bit inputs"
    }

    /// `image.embedding` (and TensorIO-style `image.feature_vector`, `image.embedder`).
    func names(modelType: String) -> Bool {
        modelType.hasPrefix("image.embed") || modelType.hasPrefix("image.feature")
    }

    /// One output that is a pooled feature map, `[1, 1, 1, N]` (Coral's embedding extractors);
    /// a `[1, N]` output is a classifier's scores unless the model says otherwise.
    func claims(outputs: [(dimensions: [Int], dataType: Tensor.DataType?)]) -> Bool {
        guard outputs.count == 1, let dimensions = outputs.first?.dimensions, dimensions.count == 4 else {
            return false
        }
        return dimensions.dropLast().allSatisfy { $0 == 1 } && (dimensions.last ?? 0) >= 2
    }

    func makeTask(model: LoadedModel, options: ImageTask.Options) throws -> ImageEmbedder {
        try ImageEmbedder(model: model, options: options.embedderOptions)
    }

    func encode(_ result: EmbeddingResult, to encoder: any Encoder) throws {
        var line = encoder.container(keyedBy: ResultsLineKey.self)
        try line.encode(imageSize: result.pixelSize)
        try encode(results: EmbeddingLine(result), in: &line)
    }

    func decode(from decoder: any Decoder, timings: ResultTimings) throws -> EmbeddingResult {
        let (line, results) = try resultsContainers(of: decoder)
        let embedding = try results.decode(EmbeddingLine.self, forKey: .results(of: kind))
        return EmbeddingResult(
            embedding: embedding.floatEmbedding, quantizedEmbedding: embedding.quantizedEmbedding,
            headName: embedding.headName,
            imageSize: try line.decodeImageSize(),
            timings: timings)
    }

    /// The answer `embedding`, the score its length, the values separated by spaces.
    func csvFields(_ result: EmbeddingResult) -> (answer: String, score: String, results: String) {
        let values = result.quantizedEmbedding.map { $0.map(String.init) } ?? result.embedding.map { String($0) }
        return ("embedding", String(result.norm), values.joined(separator: " "))
    }

    func textLines(_ result: EmbeddingResult, image: String) -> [String] {
        let timing = stageTimes(result.timings)
        let first = result.embedding.prefix(8).map { fixedDecimals(Double($0), 4) }.joined(separator: " ")
        return [
            "\(image)  \(result.imageWidth)x\(result.imageHeight)  (\(timing))",
            "  \(summary(result))",
            "  \(first)\(result.embedding.count > 8 ? " ..." : "")",
        ]
    }

    func summary(_ result: EmbeddingResult) -> String {
        "embedding of \(result.embedding.count) values, length \(fixedDecimals(Double(result.norm), 4))"
            + (result.quantizedEmbedding == nil ? "" : ", quantized")
    }

    /// No labels: the pages show the embedding's size.
    func shownAnswers(_ result: EmbeddingResult) -> [(label: String, score: Float, box: [Float]?)] {
        [("embedding of \(result.embedding.count) values", min(result.norm, 1), nil)]
    }
}

/// An embedding as a results line writes it (MediaPipe's `Embedding`).
private struct EmbeddingLine: Codable {
    var headIndex: Int
    var headName: String
    var floatEmbedding: [Float]
    var quantizedEmbedding: [Int8]?

    private enum CodingKeys: String, CodingKey {
        case headIndex = "head_index"
        case headName = "head_name"
        case floatEmbedding = "float_embedding"
        case quantizedEmbedding = "quantized_embedding"
    }

    init(_ result: EmbeddingResult) {
        headIndex = 0
        headName = result.headName
        floatEmbedding = result.embedding
        quantizedEmbedding = result.quantizedEmbedding
    }
}
