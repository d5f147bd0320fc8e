/// What a model answered for one image.
///
/// The library's two tasks have a case each; a task registered beside them (see
/// ``VisionTaskDefinition``) answers ``other(_:)``.
public enum ImageAnswer: Hashable, Sendable {
    /// A classifier's categories.
    case classification(ClassificationResult)
    /// A detector's objects.
    case detection(DetectionResult)
    /// The result of another registered task.
    case other(any RegisteredTaskResult)

    /// The task's own result.
    public var result: any VisionTaskResult {
        switch self {
        case .classification(let result): return result
        case .detection(let result): return result
        case .other(let result): return result
        }
    }

    /// The task the answer comes from.
    public var kind: ImageTask.Kind {
        switch self {
        case .classification: return .classification
        case .detection: return .detection
        case .other(let result): return type(of: result).kind
        }
    }

    /// The batch the image ran in (a classifier's `classify(batch:)`), or `nil` when it ran alone.
    public var batch: InferenceBatch? {
        if case .classification(let result) = self { return result.batch }
        return nil
    }

    /// Milliseconds spent decoding the file.
    public var decodingMilliseconds: Double { result.decodingMilliseconds }

    /// Milliseconds spent turning the image into the model input.
    public var preprocessingMilliseconds: Double { result.preprocessingMilliseconds }

    /// Milliseconds spent in the runtime and reading its outputs (a detector's box decoding
    /// and suppression included).
    public var inferenceMilliseconds: Double { result.inferenceMilliseconds + result.postprocessingMilliseconds }

    /// Whether two answers are the same: the same task and equal results.
    ///
    /// - Parameters:
    ///   - lhs: An answer.
    ///   - rhs: Another.
    /// - Returns: Whether they are equal.
    public static func == (lhs: ImageAnswer, rhs: ImageAnswer) -> Bool {
        switch (lhs, rhs) {
        case (.classification(let a), .classification(let b)): return a == b
        case (.detection(let a), .detection(let b)): return a == b
        case (.other(let a), .other(let b)): return AnyHashable(a) == AnyHashable(b)
        default: return false
        }
    }

    /// Hashes the task and its result.
    ///
    /// - Parameter hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        switch self {
        case .classification(let result): hasher.combine(result)
        case .detection(let result): hasher.combine(result)
        case .other(let result): hasher.combine(AnyHashable(result))
        }
    }
}
