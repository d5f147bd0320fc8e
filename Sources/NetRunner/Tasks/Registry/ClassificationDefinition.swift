import NetRunnerImage
import NetRunnerSupport

/// The classifier as a registered task: ``ImageClassifier`` and ``ClassificationResult``.
struct ClassificationDefinition: LibraryTaskDefinition {
    typealias Task = ImageClassifier

    static let names = TaskNames(
        kind: .classification, verb: "classify", model: "classifier", withArticle: "a classifier")

    var resultsSchema: String {
        #"""
        {"type": "array", "description": "Best first.", "items": {
          "type": "object", "required": ["index", "score"], "additionalProperties": false, "properties": {
            "index": {"type": "integer"},
            "label": {"type": "string", "description": "The whole line of the labels file."},
            "display_name": {"type": "string", "description": "The label's first name (before the first comma), or the display-names file's."},
            "score": {"type": "number"}}}}
        """#
    }
    var runsAsDescribedModel: Bool { true }
    var assumedPreprocessing: String {
        "RGB, a centre crop, the input's default scaling (raw bytes for uint8, values in [0, 1] for float)"
    }

    func names(modelType: String) -> Bool {
        modelType.hasPrefix("image.classification")
    }

    func makeTask(model: LoadedModel, options: ImageTask.Options) throws -> ImageClassifier {
        try ImageClassifier(model: model, options: options.classifierOptions)
    }

    func encode(_ result: ClassificationResult, to encoder: any Encoder) throws {
        var line = encoder.container(keyedBy: ResultsLineKey.self)
        try encode(results: result.categories.map(CategoryLine.init), in: &line)
    }

    func decode(from decoder: any Decoder, timings: ResultTimings) throws -> ClassificationResult {
        let (line, results) = try resultsContainers(of: decoder)
        let categories = try results.decode([CategoryLine].self, forKey: .results(of: kind))
        var result = ClassificationResult(categories: categories.map(\.category), timings: timings)
        if let size = try line.decodeIfPresent(Int.self, forKey: "batch_size"),
            let whole = try line.decodeIfPresent(Double.self, forKey: "batch_inference_latency")
        {
            result.batch = InferenceBatch(size: size, inferenceMilliseconds: whole)
        }
        return result
    }

    func csvFields(_ result: ClassificationResult) -> (answer: String, score: String, results: String) {
        let best = result.categories.first
        return (
            best.map { $0.label ?? String($0.index) } ?? "", best.map { String($0.score) } ?? "",
            result.categories.map { "\($0.label ?? String($0.index)):\($0.score)" }.joined(separator: ";")
        )
    }

    func textLines(_ result: ClassificationResult, image: String) -> [String] {
        let timing = stageTimes(result.timings)
        // A batched image's inference is its share: the batch's own time said beside it.
        let batch = result.batch.map {
            "; inference a share of a batch of \($0.size) run in \(fixedDecimals($0.inferenceMilliseconds, 1)) ms"
        }
        var lines = ["\(image)  (\(timing)\(batch ?? ""))"]
        if result.categories.isEmpty { lines.append("  (no label above the threshold)") }
        for category in result.categories {
            let name = category.displayName ?? category.label ?? "class \(category.index)"
            lines.append("  \(fixedDecimals(Double(category.score), 4))  \(name)  [\(category.index)]")
        }
        return lines
    }

    func summary(_ result: ClassificationResult) -> String {
        let best = result.categories.prefix(3).map {
            "\($0.displayName ?? $0.label ?? "class \($0.index)") \(fixedDecimals(Double($0.score), 3))"
        }
        return best.isEmpty ? "(no label above the threshold)" : best.joined(separator: ", ")
    }

    func shownAnswers(_ result: ClassificationResult) -> [(label: String, score: Float, box: [Float]?)] {
        result.categories.map { ($0.displayName ?? $0.label ?? "class \($0.index)", $0.score, nil) }
    }

    func draw(_ result: ClassificationResult, on image: PixelBuffer) throws(ImageError) -> PixelBuffer {
        Annotator.drawLabels(
            result.categories.prefix(3).map {
                ($0.displayName ?? $0.label ?? "class \($0.index)", $0.score, $0.index)
            }, on: image)
    }
}

/// A category as a results line writes it.
private struct CategoryLine: Codable {
    var index: Int
    var label: String?
    var displayName: String?
    var score: Float

    private enum CodingKeys: String, CodingKey {
        case index, label, score
        case displayName = "display_name"
    }

    init(_ category: Category) {
        index = category.index
        label = category.label
        displayName = category.displayName
        score = category.score
    }

    var category: Category {
        Category(index: index, score: score, label: label, displayName: displayName)
    }
}
