package import FoundationEssentials
package import NetRunnerImage

/// A photo as a JPEG that any browser draws: decoded as every upload is, shrunk to fit a longest
/// side, and encoded with the project's JPEG encoder.
///
/// The decode is ``ImageDecoder``'s, so a rendering reads every format an answer reads (HEIC,
/// AVIF, TIFF, WebP...), applies the EXIF orientation (the JPEG is upright), decodes HEIC and
/// AVIF in the decoder processes when the server isolates them and waits for its turn in the
/// pixel budget when the photo is large (the engine's ``InferenceEngine/Configuration/decoding``).
/// serve's web page shows it in place of a photo the browser cannot draw, so that the boxes,
/// keypoints and masks, in the photo's pixels, lie over the real picture.
package struct RenderedImage: Sendable, Equatable {
    /// The JPEG.
    package var jpeg: Data
    /// The JPEG's size.
    package var size: PixelSize
    /// The photo's own size, upright: what the answers' coordinates refer to.
    package var originalSize: PixelSize

    /// The JPEG quality of a rendering (libjpeg's scale, 1...100).
    package static let quality = 90

    /// Renders an encoded photo.
    ///
    /// - Parameters:
    ///   - data: The encoded photo.
    ///   - longestSide: The JPEG's longest side at most, in pixels (1 or more); a smaller photo
    ///     keeps its size, pixel for pixel.
    ///   - maximumPixelCount: The largest photo decoded, in pixels (checked from its header).
    ///   - source: The name errors give the photo.
    /// - Returns: The rendering.
    /// - Throws: ``ImageError``: the decoder's (not an image, too large, corrupt...) or the
    ///   encoder's.
    package static func make(_ data: Data, longestSide: Int, maximumPixelCount: Int, source: String)
        throws(ImageError) -> RenderedImage
    {
        let options = decodingOptions(longestSide: longestSide, maximumPixelCount: maximumPixelCount)
        return try make(ImageDecoder.decode(data: data, options: options, source: source), longestSide: longestSide)
    }

    /// How a rendering decodes its photo.
    ///
    /// - Parameters:
    ///   - longestSide: The JPEG's longest side at most, in pixels.
    ///   - maximumPixelCount: The largest photo decoded, in pixels.
    /// - Returns: The options.
    package static func decodingOptions(longestSide: Int, maximumPixelCount: Int) -> DecodingOptions {
        var options = DecodingOptions(pixelFormat: .rgb24, maximumPixelCount: maximumPixelCount)
        // A large JPEG or WebP is scaled while it decodes, never below the size wanted.
        options.minimumSize = .square(max(1, longestSide))
        return options
    }

    /// Renders a photo decoded with ``decodingOptions(longestSide:maximumPixelCount:)``.
    ///
    /// - Parameters:
    ///   - image: The decoded photo.
    ///   - longestSide: The JPEG's longest side at most, in pixels (1 or more).
    /// - Returns: The rendering.
    /// - Throws: ``ImageError``: the resizer's or the encoder's.
    package static func make(_ image: DecodedImage, longestSide: Int) throws(ImageError) -> RenderedImage {
        let side = max(1, longestSide)
        let original = image.orientedSize
        let scale = min(1, Double(side) / Double(max(original.width, original.height, 1)))
        let size = PixelSize(
            width: max(1, Int((Double(original.width) * scale).rounded())),
            height: max(1, Int((Double(original.height) * scale).rounded())))
        let pixels = image.pixels.size == size ? image.pixels : try image.pixels.resized(to: size)
        return RenderedImage(jpeg: try pixels.jpegData(quality: quality), size: size, originalSize: original)
    }
}
