public import FoundationEssentials

/// A small JPEG of an image, inlined in a report as a `data:` URI.
public struct Thumbnail: Equatable, Sendable {
    /// `data:image/jpeg;base64,...`.
    public var dataURI: String
    /// The JPEG itself.
    public var jpeg: Data
    /// The thumbnail's size.
    public var size: PixelSize
    /// The original image's size (as displayed, orientation applied), which boxes refer to.
    public var originalSize: PixelSize

    /// Makes a thumbnail whose longer side is at most `longerSide` pixels.
    ///
    /// - Parameters:
    ///   - path: The image file.
    ///   - longerSide: The longest side in pixels.
    /// - Returns: The thumbnail, or `nil` when the image cannot be decoded.
    public static func make(path: String, longerSide: Int = 240) -> Thumbnail? {
        // A thumbnail needs no exact pixels: large JPEGs are scaled while decoding.
        var options = DecodingOptions(pixelFormat: .rgb24, maximumPixelCount: 100_000_000)
        options.minimumSize = PixelSize(width: longerSide, height: longerSide)
        guard let image = try? ImageDecoder.decode(contentsOf: path, options: options) else { return nil }
        let original = image.orientedSize
        let decoded = image.pixels.size
        let scale = min(1, Double(longerSide) / Double(max(decoded.width, decoded.height)))
        let size = PixelSize(
            width: max(1, Int((Double(decoded.width) * scale).rounded())),
            height: max(1, Int((Double(decoded.height) * scale).rounded())))
        guard let small = try? image.pixels.resized(to: size), let jpeg = try? small.jpegData(quality: 82) else {
            return nil
        }
        return Thumbnail(
            dataURI: "data:image/jpeg;base64," + jpeg.base64EncodedString(), jpeg: jpeg, size: size,
            originalSize: original)
    }
}
