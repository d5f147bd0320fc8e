/// An axis-aligned box in an image's pixel coordinates (origin top-left, y down).
public struct BoundingBox: Equatable, Hashable, Sendable, Codable {
    /// The left edge.
    public var minX: Float
    /// The top edge.
    public var minY: Float
    /// The right edge.
    public var maxX: Float
    /// The bottom edge.
    public var maxY: Float

    /// Creates a box from its edges.
    ///
    /// - Parameters:
    ///   - minX: The left edge.
    ///   - minY: The top edge.
    ///   - maxX: The right edge.
    ///   - maxY: The bottom edge.
    public init(minX: Float, minY: Float, maxX: Float, maxY: Float) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    /// The width (0 for an inverted box).
    public var width: Float { max(0, maxX - minX) }

    /// The height (0 for an inverted box).
    public var height: Float { max(0, maxY - minY) }

    /// The area.
    public var area: Float { width * height }

    /// The intersection over union with another box, in [0, 1].
    ///
    /// - Parameter other: The other box.
    /// - Returns: The area both cover divided by the area either covers (0 if both are empty).
    public func intersectionOverUnion(with other: BoundingBox) -> Float {
        let overlap = BoundingBox(
            minX: max(minX, other.minX), minY: max(minY, other.minY),
            maxX: min(maxX, other.maxX), maxY: min(maxY, other.maxY)
        ).area
        let union = area + other.area - overlap
        return union > 0 ? overlap / union : 0
    }

    /// The box clamped to an image of the given size.
    ///
    /// - Parameters:
    ///   - width: The image width.
    ///   - height: The image height.
    /// - Returns: The part of the box inside the image.
    public func clamped(width: Float, height: Float) -> BoundingBox {
        BoundingBox(
            minX: min(max(minX, 0), width), minY: min(max(minY, 0), height),
            maxX: min(max(maxX, 0), width), maxY: min(max(maxY, 0), height))
    }
}
