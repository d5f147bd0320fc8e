/// An axis-aligned rectangle of whole pixels; `x` and `y` are the top-left corner.
public struct PixelRect: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The left column.
    public var x: Int
    /// The top row.
    public var y: Int
    /// The number of columns.
    public var width: Int
    /// The number of rows.
    public var height: Int

    /// Creates a rectangle.
    ///
    /// - Parameters:
    ///   - x: The left column.
    ///   - y: The top row.
    ///   - width: The number of columns.
    ///   - height: The number of rows.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The largest centred square inside an image of `size`, offsets rounded down.
    ///
    /// This is the crop of the iOS examples' `centerThumbnail(ofSize:)` and of Python's
    /// `tools/models/photo_prep.py`: side `min(width, height)`, origin
    /// `((width - side) / 2, (height - side) / 2)`.
    ///
    /// - Parameter size: The image's size.
    /// - Returns: The square.
    public static func centerSquare(in size: PixelSize) -> PixelRect {
        let side = min(size.width, size.height)
        return PixelRect(x: (size.width - side) / 2, y: (size.height - side) / 2, width: side, height: side)
    }

    /// The part of this rectangle inside `size`'s bounds; its width or height may be 0.
    ///
    /// - Parameter size: The image's size.
    /// - Returns: The intersection with `(0, 0, size.width, size.height)`.
    public func clamped(to size: PixelSize) -> PixelRect {
        let left = min(max(x, 0), size.width)
        let top = min(max(y, 0), size.height)
        let right = min(max(x.addingReportingOverflow(width).partialValue, left), size.width)
        let bottom = min(max(y.addingReportingOverflow(height).partialValue, top), size.height)
        return PixelRect(x: left, y: top, width: max(right - left, 0), height: max(bottom - top, 0))
    }

    /// Whether the rectangle covers no pixel.
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The size of the rectangle.
    public var size: PixelSize { PixelSize(width: width, height: height) }

    /// `(x, y, width x height)`.
    public var description: String { "(\(x), \(y), \(width)x\(height))" }
}
