/// What a classifier found in one image, and how long each stage took (Net Runner reports
/// `preprocessor_latency` and `inference_latency`).
public struct ClassificationResult: Equatable, Hashable, Sendable {
    /// The best categories, highest score first.
    public var categories: [Category]
    /// The time each stage took; reading the scores is counted in the inference, and an image
    /// run in a batch has its share of the batch's time (see ``batch``).
    public var timings: ResultTimings
    /// The batch the image ran in, with the batch's whole time; `nil` when it ran alone.
    public var batch: InferenceBatch? = nil

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - categories: The best categories.
    ///   - timings: The time each stage took.
    public init(categories: [Category], timings: ResultTimings) {
        self.categories = categories
        self.timings = timings
    }

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - categories: The best categories.
    ///   - decodingMilliseconds: Decoding time.
    ///   - preprocessingMilliseconds: Preprocessing time.
    ///   - inferenceMilliseconds: Inference time.
    public init(
        categories: [Category], decodingMilliseconds: Double, preprocessingMilliseconds: Double,
        inferenceMilliseconds: Double
    ) {
        self.init(
            categories: categories,
            timings: ResultTimings(
                decoding: decodingMilliseconds, preprocessing: preprocessingMilliseconds,
                inference: inferenceMilliseconds))
    }
}

extension ClassificationResult: VisionTaskResult {
    /// This result as an ``ImageAnswer``.
    public var imageAnswer: ImageAnswer { .classification(self) }
}

extension ClassificationResult: Codable {
    private enum CodingKeys: String, CodingKey {
        case categories, batch
    }

    /// Reads a result written by ``encode(to:)``.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for a missing or mistyped field.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            categories: try container.decode([Category].self, forKey: .categories),
            timings: try ResultTimings(fieldsOf: decoder, postprocessing: false))
        batch = try container.decodeIfPresent(InferenceBatch.self, forKey: .batch)
    }

    /// Writes the categories, the batch and three stage times, a field each.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(categories, forKey: .categories)
        try timings.encodeFields(to: encoder, postprocessing: false)
        try container.encodeIfPresent(batch, forKey: .batch)
    }
}
