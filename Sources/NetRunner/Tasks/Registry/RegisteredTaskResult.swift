/// The result of a task registered beside the library's two (see ``VisionTaskDefinition``):
/// what ``ImageAnswer/other(_:)`` carries.
///
///     struct MeanScore: RegisteredTaskResult {
///         static let kind = ImageTask.Kind("mean_score")
///         var mean: Float
///         var timings = ResultTimings()
///     }
public protocol RegisteredTaskResult: VisionTaskResult, Hashable {
    /// The task the result comes from.
    static var kind: ImageTask.Kind { get }
}

extension RegisteredTaskResult {
    /// This result as an ``ImageAnswer``: ``ImageAnswer/other(_:)``.
    public var imageAnswer: ImageAnswer { .other(self) }
}
