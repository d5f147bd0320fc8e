/// What a vision task answers for one image, with the time each stage took (Net Runner's
/// `preprocessor_latency` and `inference_latency`).
public protocol VisionTaskResult: Sendable {
    /// Milliseconds spent decoding the file (0 for pixels given directly).
    var decodingMilliseconds: Double { get }
    /// Milliseconds spent turning the image into the model's input.
    var preprocessingMilliseconds: Double { get }
    /// Milliseconds spent in the runtime.
    var inferenceMilliseconds: Double { get }
    /// Milliseconds spent turning the outputs into the answer.
    var postprocessingMilliseconds: Double { get }
    /// The answer as one of the answers every task can give.
    var imageAnswer: ImageAnswer { get }
}
