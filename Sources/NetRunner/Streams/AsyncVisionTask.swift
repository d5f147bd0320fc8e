/// A vision task that answers asynchronously, from any thread: what a ``StreamRunner`` runs
/// frames on.
///
/// A ``VisionTaskPool`` is one (interpreters of its own); a server's engine is another, so that
/// its streams share its workers, threads, queue and accelerator with its requests.
public protocol AsyncVisionTask: Sendable {
    /// Runs the task on one image.
    ///
    /// - Parameter image: The image (a frame's pixels, say).
    /// - Returns: The answer, in the image's coordinates.
    /// - Throws: The task's errors.
    func run(_ image: ImageInput) async throws -> ImageAnswer
}
