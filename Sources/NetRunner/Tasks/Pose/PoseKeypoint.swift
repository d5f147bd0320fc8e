/// One body keypoint of a pose: its name, where it is in the image's pixels and how sure the
/// model is.
public struct PoseKeypoint: Hashable, Sendable, Codable {
    /// The keypoint's name, one of COCO's (`nose` to `right_ankle`).
    public var name: String
    /// Its horizontal position, in the original image's pixels.
    public var x: Float
    /// Its vertical position, in the original image's pixels.
    public var y: Float
    /// The model's confidence, 0 to 1.
    public var score: Float

    /// Creates a keypoint.
    ///
    /// - Parameters:
    ///   - name: The keypoint's name.
    ///   - x: Its horizontal position in image pixels.
    ///   - y: Its vertical position in image pixels.
    ///   - score: The model's confidence.
    public init(name: String, x: Float, y: Float, score: Float) {
        self.name = name
        self.x = x
        self.y = y
        self.score = score
    }
}
