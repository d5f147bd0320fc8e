/// A width and a height in pixels.
public struct PixelSize: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The number of columns.
    public var width: Int
    /// The number of rows.
    public var height: Int

    /// Creates a size.
    ///
    /// - Parameters:
    ///   - width: The number of columns.
    ///   - height: The number of rows.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// A square size.
    ///
    /// - Parameter side: The width and the height.
    /// - Returns: `side`x`side`.
    public static func square(_ side: Int) -> PixelSize {
        PixelSize(width: side, height: side)
    }

    /// `width`x`height`, for example `224x224`.
    public var description: String { "\(width)x\(height)" }
}
