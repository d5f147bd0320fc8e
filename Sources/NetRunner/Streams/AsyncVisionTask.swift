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

    /// Whether an error of ``run(_:)`` only says the task was too busy to take the image (a
    /// full queue): a live stream counts that frame as dropped while busy, not failed.
    ///
    /// - Parameter error: The error.
    /// - Returns: `true` for a refusal for being busy; `false` by default.
    func isBusy(_ error: any Error) -> Bool
}

extension AsyncVisionTask {
    /// No error says busy: a pool's tasks wait their turn instead.
    public func isBusy(_ error: any Error) -> Bool { false }
}
