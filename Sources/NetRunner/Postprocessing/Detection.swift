/// One object found in an image: where, what, and how sure.
public struct Detection: Equatable, Hashable, Sendable, Codable {
    /// The box around the object, in the original image's pixels.
    public var boundingBox: BoundingBox
    /// The object's class (the best one first).
    public var categories: [Category]
    /// Points of interest, for models that output them (BlazeFace: six face landmarks).
    public var keypoints: [Keypoint]

    /// Creates a detection.
    ///
    /// - Parameters:
    ///   - boundingBox: The box in original image pixels.
    ///   - categories: The classes, best first.
    ///   - keypoints: Landmarks, if the model has them.
    public init(boundingBox: BoundingBox, categories: [Category], keypoints: [Keypoint] = []) {
        self.boundingBox = boundingBox
        self.categories = categories
        self.keypoints = keypoints
    }

    /// The score of the best category (0 without categories).
    public var score: Float { categories.first?.score ?? 0 }
}
