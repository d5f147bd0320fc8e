import NetRunnerImage

/// The results line: what a model answered for one image, how long each stage took, or why
/// the image failed.
///
/// Every surface writes it alike: `--json`, `bulk`, `evaluate` (one line per iteration of an
/// image), `stream`, and the server's answers and album runs.
///
/// In JSON Lines the keys are Net Runner's result keys: `image`, `model`, `error`,
/// `error_description`, `preprocessor_latency`, `inference_latency` and `inference_results`,
/// with `decode_latency`, `total_latency` and `iteration` added. What goes under
/// `inference_results` is the task's to write (``VisionTaskDefinition/encode(_:to:)``):
/// classifications are a list (`[{"index", "label", "score"}]`, best first) rather than Net
/// Runner's unordered dictionary, detections a list of COCO boxes.
public struct ResultsLine: Equatable, Sendable {
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

    /// Creates the line of an answer.
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

    /// Creates the line of a failure.
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

    /// What identifies the line when a run resumes: model, image and iteration, compared byte
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

    /// The image and iteration of a key of ``key(image:model:iteration:)`` made for `model`
    /// with an iteration, or `nil` for any other key (another model's, a plain image's).
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - model: The model's id or path.
    /// - Returns: The image, byte for byte, and the iteration.
    package static func run(ofKey key: ExactString, model: String) -> (image: ExactString, iteration: Int)? {
        let bytes = Array(key.string.utf8)
        let prefix = Array(model.utf8) + [0x1F]
        guard bytes.starts(with: prefix), let separator = bytes.lastIndex(of: 0x1F), separator >= prefix.count,
            let iteration = Int(String(decoding: bytes[(separator + 1)...], as: UTF8.self))
        else { return nil }
        return (ExactString(String(decoding: bytes[prefix.count..<separator], as: UTF8.self)), iteration)
    }

    /// Milliseconds from the start of decoding to the end of inference.
    public var totalMilliseconds: Double? {
        answer.map { $0.decodingMilliseconds + $0.preprocessingMilliseconds + $0.inferenceMilliseconds }
    }
}

extension ResultsLine: Codable {
    private enum CodingKeys: String, CodingKey {
        case image, model, iteration, error
        case errorDescription = "error_description"
        case decodeLatency = "decode_latency"
        case preprocessorLatency = "preprocessor_latency"
        case inferenceLatency = "inference_latency"
        case totalLatency = "total_latency"
        case inferenceResults = "inference_results"
        case batchSize = "batch_size"
        case batchInferenceLatency = "batch_inference_latency"
    }

    /// Encodes the line as JSON (one results line of JSON Lines).
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
        // The task writes its part: inference_results.<kind>, and keys of its own.
        try VisionTaskRegistry.definition(of: answer).encode(answer: answer, to: encoder)
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
        // inference_results holds the task's kind: that task reads the line.
        let results = try container.nestedContainer(keyedBy: ResultsLineKey.self, forKey: .inferenceResults)
        let names = Set(results.allKeys.map(\.stringValue))
        guard let definition = VisionTaskRegistry.definitions.first(where: { names.contains($0.kind.rawValue) }) else {
            let found = results.allKeys.map(\.stringValue).sorted().joined(separator: ", ")
            throw DecodingError.dataCorruptedError(
                forKey: .inferenceResults, in: container,
                debugDescription: "inference_results names no registered task (found: \(found))")
        }
        answer = try definition.decodeAnswer(
            from: decoder, timings: ResultTimings(decoding: decode, preprocessing: preprocess, inference: inference))
    }

    /// Milliseconds to the microsecond: finer digits are noise and only lengthen the lines.
    private static func rounded(_ milliseconds: Double) -> Double {
        (milliseconds * 1000).rounded() / 1000
    }
}

/// The results line's former name.
@available(*, deprecated, renamed: "ResultsLine")
public typealias BulkRecord = ResultsLine
