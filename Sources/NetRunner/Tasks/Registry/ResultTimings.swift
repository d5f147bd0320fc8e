/// The time each stage of one answer took, in milliseconds: what every task's result holds
/// (``VisionTaskResult/timings``) and a results line writes (`decode_latency`,
/// `preprocessor_latency`, `inference_latency`).
public struct ResultTimings: Hashable, Sendable {
    /// Decoding the file (0 for pixels given directly).
    public var decoding: Double
    /// Turning the image into the model's input.
    public var preprocessing: Double
    /// The runtime.
    public var inference: Double
    /// Turning the outputs into the answer (not in a results line: 0 when read from one).
    public var postprocessing: Double

    /// Creates the times.
    ///
    /// - Parameters:
    ///   - decoding: Decoding the file.
    ///   - preprocessing: Turning the image into the model's input.
    ///   - inference: The runtime.
    ///   - postprocessing: Turning the outputs into the answer.
    public init(decoding: Double = 0, preprocessing: Double = 0, inference: Double = 0, postprocessing: Double = 0) {
        self.decoding = decoding
        self.preprocessing = preprocessing
        self.inference = inference
        self.postprocessing = postprocessing
    }
}

extension ResultTimings {
    /// The times' keys in the `Codable` form of ``ClassificationResult`` and ``DetectionResult``:
    /// a field each, beside the result's own.
    private enum FieldKey: String, CodingKey {
        case decodingMilliseconds, preprocessingMilliseconds, inferenceMilliseconds, postprocessingMilliseconds
    }

    /// Reads the times from a result's fields.
    ///
    /// - Parameters:
    ///   - decoder: The result's decoder.
    ///   - postprocessing: Whether the result has a `postprocessingMilliseconds` field (else 0).
    /// - Throws: `DecodingError` for a missing or mistyped field.
    init(fieldsOf decoder: any Decoder, postprocessing: Bool) throws {
        let fields = try decoder.container(keyedBy: FieldKey.self)
        self.init(
            decoding: try fields.decode(Double.self, forKey: .decodingMilliseconds),
            preprocessing: try fields.decode(Double.self, forKey: .preprocessingMilliseconds),
            inference: try fields.decode(Double.self, forKey: .inferenceMilliseconds),
            postprocessing: postprocessing ? try fields.decode(Double.self, forKey: .postprocessingMilliseconds) : 0)
    }

    /// Writes the times as fields of a result.
    ///
    /// - Parameters:
    ///   - encoder: The result's encoder.
    ///   - postprocessing: Whether to write `postprocessingMilliseconds`.
    /// - Throws: The encoder's errors.
    func encodeFields(to encoder: any Encoder, postprocessing: Bool) throws {
        var fields = encoder.container(keyedBy: FieldKey.self)
        try fields.encode(decoding, forKey: .decodingMilliseconds)
        try fields.encode(preprocessing, forKey: .preprocessingMilliseconds)
        try fields.encode(inference, forKey: .inferenceMilliseconds)
        if postprocessing { try fields.encode(self.postprocessing, forKey: .postprocessingMilliseconds) }
    }
}
