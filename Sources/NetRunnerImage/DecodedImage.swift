/// The result of ``ImageDecoder``: the pixels plus what the file said about them.
public struct DecodedImage: Sendable, Equatable {
    /// The decoded pixels, upright when ``DecodingOptions/appliesOrientation`` was on (and
    /// ``DecodingOptions/defersOrientation`` off).
    public var pixels: PixelBuffer
    /// The file's format.
    public var format: ImageFormat
    /// The orientation tag found in the file (``ImageOrientation/up`` when there is none).
    public var orientation: ImageOrientation
    /// The size stored in the file's header, before DCT scaling and orientation.
    public var storedSize: PixelSize
    /// The scale decoded at, `n` of `n/8` (8 means full size): JPEG's DCT scaling and WebP's
    /// scaled decoding for ``DecodingOptions/minimumSize``, and the nearest eighth (at least 1)
    /// for a HEIC's thumbnail (``DecodingOptions/minimumThumbnailSize``); 8 otherwise.
    public var scaleNumerator: Int
    /// The size of the whole image at the decoded scale (upright when ``pixels`` are): the
    /// size of ``pixels`` unless ``DecodingOptions/region`` kept only part of the image.
    public var fullSize: PixelSize
    /// Where ``pixels`` lie in the whole image of ``fullSize``: all of it unless
    /// ``DecodingOptions/region`` kept only part (then at least that part, a little more where
    /// the JPEG's blocks or the HEIC's tiles are wider).
    public var region: PixelRect
    /// Whether ``pixels``, ``fullSize`` and ``region`` are upright: `false` when
    /// ``DecodingOptions/defersOrientation`` left a turned photo as stored, for the consumer
    /// to turn with ``orientation``.
    public var isUpright = true

    /// Creates a decoded image (the decoders do this; public for tests and custom decoders).
    ///
    /// - Parameters:
    ///   - pixels: The pixels.
    ///   - format: The file format.
    ///   - orientation: The orientation tag.
    ///   - storedSize: The size in the header.
    ///   - scaleNumerator: The JPEG scale numerator over 8.
    ///   - fullSize: The whole image's size at the decoded scale, `nil` for the pixels' size.
    ///   - region: Where the pixels lie in the whole image, `nil` for all of it.
    public init(
        pixels: PixelBuffer, format: ImageFormat, orientation: ImageOrientation, storedSize: PixelSize,
        scaleNumerator: Int = 8, fullSize: PixelSize? = nil, region: PixelRect? = nil
    ) {
        let full = fullSize ?? pixels.size
        self.fullSize = full
        self.region = region ?? PixelRect(x: 0, y: 0, width: full.width, height: full.height)
        self.pixels = pixels
        self.format = format
        self.orientation = orientation
        self.storedSize = storedSize
        self.scaleNumerator = scaleNumerator
    }
}
