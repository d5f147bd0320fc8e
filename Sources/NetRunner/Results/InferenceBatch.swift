/// The run of the model an image shared with others (`bulk --batch`, `serve`'s dynamic
/// batching on the GPU): how many images it held and how long it took as a whole.
///
/// A batched image's own `inferenceMilliseconds` is its share: the batch's time divided by its
/// images, so that per-image figures still add up to the time spent. Results lines write both,
/// `inference_latency` (the share) and `batch_inference_latency` with `batch_size`.
public struct InferenceBatch: Equatable, Hashable, Sendable, Codable {
    /// The images the run held (without the copies that fill a smaller batch).
    public var size: Int
    /// Milliseconds the whole run took, in the runtime and reading its outputs.
    public var inferenceMilliseconds: Double

    /// Creates a batch's timing.
    ///
    /// - Parameters:
    ///   - size: The images in the run.
    ///   - inferenceMilliseconds: The run's time.
    public init(size: Int, inferenceMilliseconds: Double) {
        self.size = size
        self.inferenceMilliseconds = inferenceMilliseconds
    }
}
