/// The part of an image ``ImageDecoder`` decodes.
public enum DecodingRegion: Sendable, Hashable, Codable {
    /// Every pixel.
    case whole
    /// The largest centred square of the upright image (``PixelRect/centerSquare(in:)``): what
    /// a model with a centre-crop input sees.
    case centerSquare

    /// The rectangle of an upright image of `size` this region covers.
    ///
    /// - Parameter size: The upright image's size.
    /// - Returns: The rectangle.
    public func rect(in size: PixelSize) -> PixelRect {
        switch self {
        case .whole: PixelRect(x: 0, y: 0, width: size.width, height: size.height)
        case .centerSquare: PixelRect.centerSquare(in: size)
        }
    }
}
