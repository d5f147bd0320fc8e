public import NetRunner
import Synchronization

/// The tasks evaluation knows: classification, detection, pose, segmentation and embedding
/// from the start, and any ``TaskEvaluation`` registered since.
public enum TaskEvaluationRegistry {
    private static let registered = Mutex<[any TaskEvaluation]>([
        ClassificationEvaluation(), DetectionEvaluation(), PoseEvaluation(), SegmentationEvaluation(),
        EmbeddingEvaluation(),
    ])

    /// Registers a task's evaluation; registering a kind again replaces it.
    ///
    /// - Parameter evaluation: The evaluation.
    public static func register(_ evaluation: any TaskEvaluation) {
        registered.withLock { list in
            if let index = list.firstIndex(where: { $0.kind == evaluation.kind }) {
                list[index] = evaluation
            } else {
                list.append(evaluation)
            }
        }
    }

    /// Every registered evaluation, the library's five first.
    public static var all: [any TaskEvaluation] { registered.withLock { $0 } }

    /// The evaluation of a task.
    ///
    /// - Parameter kind: The task.
    /// - Returns: Its evaluation, or `nil` when none is registered.
    public static func evaluation(for kind: ImageTask.Kind) -> (any TaskEvaluation)? {
        all.first { $0.kind == kind }
    }
}
