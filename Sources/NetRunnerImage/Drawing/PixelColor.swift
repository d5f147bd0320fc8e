/// An RGB colour to draw with.
public struct PixelColor: Equatable, Hashable, Sendable {
    /// Red.
    public var red: UInt8
    /// Green.
    public var green: UInt8
    /// Blue.
    public var blue: UInt8

    /// Creates a colour.
    ///
    /// - Parameters:
    ///   - red: Red.
    ///   - green: Green.
    ///   - blue: Blue.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// White.
    public static let white = PixelColor(red: 255, green: 255, blue: 255)
}
