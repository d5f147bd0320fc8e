import NetRunnerImage

/// One line of bulk inference results: what a model answered for one image (one iteration of
/// it, in an evaluation), how long each stage took, or why the image failed.
///
/// In JSON Lines the keys are Net Runner's result keys: `image`, `model`, `error`,
/// `error_description`, `preprocessor_latency`, `inference_latency` and `inference_results`,
/// with `decode_latency`, `total_latency` and `iteration` added. Classifications are a list
/// (`[{"index", "label", "score"}]`, best first) rather than Net Runner's unordered dictionary.
public struct BulkRecord: Equatable, Sendable {
    /// The image's path, as listed.
    public var image: String
    /// The model's id or path, when a run has several.
    public var model: String?
    /// The iteration (from 1), when a run repeats images.
    public var iteration: Int?
    /// The answer, or `nil` when the image failed.
    public var answer: ImageAnswer?
    /// Why the image failed, or `nil`.
    public var error: String?

    /// Creates the record of an answer.
    ///
    /// - Parameters:
    ///   - image: The image's path.
    ///   - model: The model's id or path.
    ///   - iteration: The iteration (from 1).
    ///   - answer: What the model answered.
    public init(image: String, model: String? = nil, iteration: Int? = nil, answer: ImageAnswer) {
        self.image = image
        self.model = model
        self.iteration = iteration
        self.answer = answer
    }

    /// Creates the record of a failure.
    ///
    /// - Parameters:
    ///   - image: The image's path.
    ///   - model: The model's id or path.
    ///   - iteration: The iteration (from 1).
    ///   - error: What went wrong, in one line.
    public init(image: String, model: String? = nil, iteration: Int? = nil, error: String) {
        self.image = image
        self.model = model
        self.iteration = iteration
        self.error = error
    }

    /// What identifies the record when a run resumes: model, image and iteration, compared byte
    /// for byte (two file names that differ only in their Unicode normalization are two images).
    public var key: ExactString {
        Self.key(image: image, model: model, iteration: iteration)
    }

    /// The resume key of an image (see ``key``).
    ///
    /// - Parameters:
    ///   - image: The image's path.
    ///   - model: The model's id or path.
    ///   - iteration: The iteration.
    /// - Returns: The key.
    public static func key(image: String, model: String? = nil, iteration: Int? = nil) -> ExactString {
        guard model != nil || iteration != nil else { return ExactString(image) }
        return ExactString("\(model ?? "")\u{1F}\(image)\u{1F}\(iteration.map(String.init) ?? "")")
    }

    /// Milliseconds from the start of decoding to the end of inference.
    public var totalMilliseconds: Double? {
        answer.map { $0.decodingMilliseconds + $0.preprocessingMilliseconds + $0.inferenceMilliseconds }
    }
}

extension BulkRecord: Codable {
    private enum CodingKeys: String, CodingKey {
        case image, model, iteration, error
        case errorDescription = "error_description"
        case decodeLatency = "decode_latency"
        case preprocessorLatency = "preprocessor_latency"
        case inferenceLatency = "inference_latency"
        case totalLatency = "total_latency"
        case inferenceResults = "inference_results"
        case imageWidth = "image_width"
        case imageHeight = "image_height"
        case batchSize = "batch_size"
        case batchInferenceLatency = "batch_inference_latency"
    }

    private enum ResultKeys: String, CodingKey {
        case classification, detection
    }

    /// A detection as a results line writes it: COCO's `[x, y, width, height]` in pixels.
    private struct DetectionLine: Codable {
        var label: String?
        var index: Int
        var score: Float
        var box: [Float]
        var keypoints: [[Float]]?
    }

    /// Encodes the record as one results line.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(image, forKey: .image)
        try container.encodeIfPresent(model, forKey: .model)
        try container.encodeIfPresent(iteration, forKey: .iteration)
        try container.encode(error != nil, forKey: .error)
        try container.encodeIfPresent(error, forKey: .errorDescription)
        guard let answer else { return }
        try container.encode(Self.rounded(answer.decodingMilliseconds), forKey: .decodeLatency)
        try container.encode(Self.rounded(answer.preprocessingMilliseconds), forKey: .preprocessorLatency)
        try container.encode(Self.rounded(answer.inferenceMilliseconds), forKey: .inferenceLatency)
        try container.encode(Self.rounded(totalMilliseconds ?? 0), forKey: .totalLatency)
        // A batched image: inference_latency is its share, these the batch's own figures.
        if let batch = answer.batch {
            try container.encode(batch.size, forKey: .batchSize)
            try container.encode(Self.rounded(batch.inferenceMilliseconds), forKey: .batchInferenceLatency)
        }
        var results = container.nestedContainer(keyedBy: ResultKeys.self, forKey: .inferenceResults)
        switch answer {
        case .classification(let result):
            try results.encode(result.categories.map(CategoryLine.init), forKey: .classification)
        case .detection(let result):
            try container.encode(result.imageWidth, forKey: .imageWidth)
            try container.encode(result.imageHeight, forKey: .imageHeight)
            let lines = result.detections.map { detection in
                let box = detection.boundingBox
                let best = detection.categories.first
                return DetectionLine(
                    label: best?.label, index: best?.index ?? 0, score: best?.score ?? 0,
                    box: [box.minX, box.minY, box.width, box.height],
                    keypoints: detection.keypoints.isEmpty ? nil : detection.keypoints.map { [$0.x, $0.y] })
            }
            try results.encode(lines, forKey: .detection)
        }
    }

    /// Decodes a results line.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for a line that is not a results line.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        image = try container.decode(String.self, forKey: .image)
        model = try container.decodeIfPresent(String.self, forKey: .model)
        iteration = try container.decodeIfPresent(Int.self, forKey: .iteration)
        if try container.decode(Bool.self, forKey: .error) {
            error = try container.decodeIfPresent(String.self, forKey: .errorDescription) ?? "failed"
            return
        }
        let decode = try container.decode(Double.self, forKey: .decodeLatency)
        let preprocess = try container.decode(Double.self, forKey: .preprocessorLatency)
        let inference = try container.decode(Double.self, forKey: .inferenceLatency)
        let results = try container.nestedContainer(keyedBy: ResultKeys.self, forKey: .inferenceResults)
        if let categories = try results.decodeIfPresent([CategoryLine].self, forKey: .classification) {
            var result = ClassificationResult(
                categories: categories.map(\.category), decodingMilliseconds: decode,
                preprocessingMilliseconds: preprocess, inferenceMilliseconds: inference)
            if let size = try container.decodeIfPresent(Int.self, forKey: .batchSize),
                let whole = try container.decodeIfPresent(Double.self, forKey: .batchInferenceLatency)
            {
                result.batch = InferenceBatch(size: size, inferenceMilliseconds: whole)
            }
            answer = .classification(result)
        } else {
            let lines = try results.decode([DetectionLine].self, forKey: .detection)
            let detections = try lines.map { line in
                guard line.box.count == 4 else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .detection, in: results, debugDescription: "a box is [x, y, width, height]")
                }
                return Detection(
                    boundingBox: BoundingBox(
                        minX: line.box[0], minY: line.box[1], maxX: line.box[0] + line.box[2],
                        maxY: line.box[1] + line.box[3]),
                    categories: [Category(index: line.index, score: line.score, label: line.label)],
                    keypoints: (line.keypoints ?? []).compactMap { $0.count == 2 ? Keypoint(x: $0[0], y: $0[1]) : nil })
            }
            answer = .detection(
                DetectionResult(
                    detections: detections,
                    imageSize: PixelSize(
                        width: try container.decode(Int.self, forKey: .imageWidth),
                        height: try container.decode(Int.self, forKey: .imageHeight)),
                    decodingMilliseconds: decode,
                    preprocessingMilliseconds: preprocess, inferenceMilliseconds: inference,
                    postprocessingMilliseconds: 0))
        }
    }

    /// Milliseconds to the microsecond: finer digits are noise and only lengthen the lines.
    private static func rounded(_ milliseconds: Double) -> Double {
        (milliseconds * 1000).rounded() / 1000
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
