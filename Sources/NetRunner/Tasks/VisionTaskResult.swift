/// What a vision task answers for one image, with the time each stage took (Net Runner's
/// `preprocessor_latency` and `inference_latency`).
///
/// A task's result holds its answer and one ``ResultTimings``; the four stage times read
/// through it (`result.inferenceMilliseconds`).
public protocol VisionTaskResult: Sendable {
    /// The time each stage took.
    var timings: ResultTimings { get }
    /// The answer as one of the answers every task can give.
    var imageAnswer: ImageAnswer { get }
}

extension VisionTaskResult {
    /// Milliseconds spent decoding the file (0 for pixels given directly).
    public var decodingMilliseconds: Double { timings.decoding }
    /// Milliseconds spent turning the image into the model's input.
    public var preprocessingMilliseconds: Double { timings.preprocessing }
    /// Milliseconds spent in the runtime.
    public var inferenceMilliseconds: Double { timings.inference }
    /// Milliseconds spent turning the outputs into the answer.
    public var postprocessingMilliseconds: Double { timings.postprocessing }
}
