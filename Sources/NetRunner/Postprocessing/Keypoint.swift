/// A point of interest of a detection (for faces: eyes, nose, mouth, ears), in pixels.
public struct Keypoint: Equatable, Hashable, Sendable, Codable {
    /// The horizontal position.
    public var x: Float
    /// The vertical position.
    public var y: Float

    /// Creates a keypoint.
    ///
    /// - Parameters:
    ///   - x: The horizontal position.
    ///   - y: The vertical position.
    public init(x: Float, y: Float) {
        self.x = x
        self.y = y
    }
}
