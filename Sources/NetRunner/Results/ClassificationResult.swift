/// What a classifier found in one image, and how long each stage took (Net Runner reports
/// `preprocessor_latency` and `inference_latency`).
public struct ClassificationResult: Equatable, Hashable, Sendable, Codable {
    /// The best categories, highest score first.
    public var categories: [Category]
    /// Milliseconds spent decoding the file (0 for pixels given directly).
    public var decodingMilliseconds: Double
    /// Milliseconds spent cropping, resizing and converting the image to the input tensor.
    public var preprocessingMilliseconds: Double
    /// Milliseconds spent in the runtime, including reading the output; for an image run in a
    /// batch, its share of the batch's time (see ``batch``).
    public var inferenceMilliseconds: Double
    /// The batch the image ran in, with the batch's whole time; `nil` when it ran alone.
    public var batch: InferenceBatch? = nil

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
        self.categories = categories
        self.decodingMilliseconds = decodingMilliseconds
        self.preprocessingMilliseconds = preprocessingMilliseconds
        self.inferenceMilliseconds = inferenceMilliseconds
    }
}

extension ClassificationResult: VisionTaskResult {
    /// The stage times; reading the scores is counted in ``inferenceMilliseconds``.
    public var timings: ResultTimings {
        ResultTimings(
            decoding: decodingMilliseconds, preprocessing: preprocessingMilliseconds, inference: inferenceMilliseconds)
    }

    /// This result as an ``ImageAnswer``.
    public var imageAnswer: ImageAnswer { .classification(self) }
}
