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
