/// What a model answered for one image.
public enum ImageAnswer: Equatable, Hashable, Sendable {
    /// A classifier's categories.
    case classification(ClassificationResult)
    /// A detector's objects.
    case detection(DetectionResult)

    /// The task's own result.
    public var result: any VisionTaskResult {
        switch self {
        case .classification(let result): return result
        case .detection(let result): return result
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
}
