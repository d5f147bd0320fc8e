public import FoundationEssentials

/// A model input made from one image, ready to be copied into the interpreter: what an
/// ``ImagePrefetcher`` hands over from its background thread.
public struct PreparedImage: Sendable {
    /// The bytes of the input tensor.
    public var input: Data
    /// How the input relates to the original image (to map boxes back).
    public var transform: ImageTransform
    /// How long cropping, resizing and converting took.
    public var preprocessingTime: Duration

    /// Creates a prepared image.
    ///
    /// - Parameters:
    ///   - input: The input tensor's bytes.
    ///   - transform: How the input relates to the original image.
    ///   - preprocessingTime: The time preprocessing took.
    public init(input: Data, transform: ImageTransform, preprocessingTime: Duration) {
        self.input = input
        self.transform = transform
        self.preprocessingTime = preprocessingTime
    }
}
