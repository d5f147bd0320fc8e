/// The stage times of one answer, in milliseconds, as a results line holds them.
public struct ResultTimings: Equatable, Sendable {
    /// Decoding the file.
    public var decoding: Double
    /// Turning the image into the model's input.
    public var preprocessing: Double
    /// The runtime and reading its outputs.
    public var inference: Double

    /// Creates the times.
    ///
    /// - Parameters:
    ///   - decoding: Decoding the file.
    ///   - preprocessing: Turning the image into the model's input.
    ///   - inference: The runtime and reading its outputs.
    public init(decoding: Double, preprocessing: Double, inference: Double) {
        self.decoding = decoding
        self.preprocessing = preprocessing
        self.inference = inference
    }
}
