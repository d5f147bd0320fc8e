public import NetRunnerImage

/// Where the model's input came from in the original image, to map model coordinates back.
///
/// Detectors answer in coordinates normalised to their input (0...1). The input was a
/// region of the decoded image (a centred square, or all of it), and the decoded image may
/// itself be a downscaled copy of the original (JPEG DCT-domain scaling). This value undoes
/// both, so boxes land on the original image's pixels.
public struct ImageTransform: Equatable, Hashable, Sendable {
    /// The region of the original image (in its pixels) that filled the model input.
    public var region: (x: Double, y: Double, width: Double, height: Double) {
        (regionX, regionY, regionWidth, regionHeight)
    }
    /// The original image's size, after EXIF orientation.
    public var imageSize: PixelSize

    private var regionX: Double
    private var regionY: Double
    private var regionWidth: Double
    private var regionHeight: Double

    /// Creates a transform.
    ///
    /// - Parameters:
    ///   - region: The region of the decoded image that was resized to the input.
    ///   - decodedSize: The decoded image's size.
    ///   - imageSize: The original image's size (larger when the decoder downscaled).
    public init(region: PixelRect, decodedSize: PixelSize, imageSize: PixelSize) {
        let scaleX = decodedSize.width > 0 ? Double(imageSize.width) / Double(decodedSize.width) : 1
        let scaleY = decodedSize.height > 0 ? Double(imageSize.height) / Double(decodedSize.height) : 1
        self.regionX = Double(region.x) * scaleX
        self.regionY = Double(region.y) * scaleY
        self.regionWidth = Double(region.width) * scaleX
        self.regionHeight = Double(region.height) * scaleY
        self.imageSize = imageSize
    }

    /// Creates the transform of a letterboxed input: the image was resized to `placement`
    /// inside an input of `inputSize`, and the rest padded.
    ///
    /// - Parameters:
    ///   - placement: Where the image landed in the input, in input pixels.
    ///   - inputSize: The model input's size.
    ///   - decodedSize: The decoded image's size.
    ///   - imageSize: The original image's size.
    public init(letterbox placement: PixelRect, inputSize: PixelSize, decodedSize: PixelSize, imageSize: PixelSize) {
        // Input pixel u maps to original x = (u - placement.x) * imageWidth / placement.width.
        let perInputX = Double(imageSize.width) / Double(max(placement.width, 1))
        let perInputY = Double(imageSize.height) / Double(max(placement.height, 1))
        self.regionX = -Double(placement.x) * perInputX
        self.regionY = -Double(placement.y) * perInputY
        self.regionWidth = Double(inputSize.width) * perInputX
        self.regionHeight = Double(inputSize.height) * perInputY
        self.imageSize = imageSize
    }

    /// Maps a point normalised to the model input (0...1) to original image pixels.
    ///
    /// - Parameters:
    ///   - x: The normalised horizontal position.
    ///   - y: The normalised vertical position.
    /// - Returns: The position in original image pixels.
    public func point(x: Float, y: Float) -> (x: Float, y: Float) {
        (Float(regionX + Double(x) * regionWidth), Float(regionY + Double(y) * regionHeight))
    }

    /// Maps a box normalised to the model input to original image pixels, clamped to the image.
    ///
    /// - Parameters:
    ///   - minX: The normalised left edge.
    ///   - minY: The normalised top edge.
    ///   - maxX: The normalised right edge.
    ///   - maxY: The normalised bottom edge.
    /// - Returns: The box in original image pixels.
    public func box(minX: Float, minY: Float, maxX: Float, maxY: Float) -> BoundingBox {
        let topLeft = point(x: minX, y: minY)
        let bottomRight = point(x: maxX, y: maxY)
        return BoundingBox(minX: topLeft.x, minY: topLeft.y, maxX: bottomRight.x, maxY: bottomRight.y)
            .clamped(width: Float(imageSize.width), height: Float(imageSize.height))
    }
}
