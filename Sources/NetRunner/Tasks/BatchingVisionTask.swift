/// A task that runs several prepared images with one run of the model: what keeps a GPU busy
/// (one image at a time leaves most of it idle).
///
/// ``ImageTask/run(batch:capacity:)``, which bulk inference's `--batch` and the server's dynamic
/// batching call, runs a task that conforms with ``run(batch:capacity:)`` and any other one image
/// at a time; a registered task's ``VisionTaskDefinition/runsInBatches`` says whether its task
/// conforms. ``ImageClassifier`` does.
public protocol BatchingVisionTask: VisionTask {
    /// Runs the model on several prepared images.
    ///
    /// - Parameters:
    ///   - batch: Images prepared with the task's ``VisionTask/preprocessing`` (an
    ///     ``ImagePrefetcher`` makes them), with the time each took to decode.
    ///   - capacity: The images per run of the model, fixed by the first call (`nil`: that
    ///     call's count).
    /// - Returns: One result per image, in order.
    /// - Throws: ``InterpreterError`` from the runtime (for the whole batch).
    func run(batch: [(image: PreparedImage, decodeTime: Duration)], capacity: Int?) throws -> [Result]
}
