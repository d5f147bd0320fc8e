/// How ``ImageDecoder`` decodes a file.
///
///     var options = DecodingOptions(pixelFormat: .rgb24)
///     options.minimumSize = .square(224)  // let libjpeg shrink big JPEGs while decoding
///     let image = try PixelBuffer(contentsOf: "photo.jpg", options: options)
public struct DecodingOptions: Sendable, Hashable, Codable {
    /// The default ``maximumPixelCount``: 100 megapixels.
    public static let defaultMaximumPixelCount = 100_000_000

    /// The default ``maximumFileSize``: 256 MiB.
    ///
    /// A file is read whole into memory before it is decoded, so this bounds that memory. Every
    /// JPEG and PNG within ``defaultMaximumPixelCount`` fits (a 100-megapixel photo is some
    /// 20-60 MB as JPEG and rarely over 200 MB as 8-bit PNG); uncompressed BMP and PNM files
    /// fit up to about 89 megapixels of RGB. Larger trusted files need the limit raised.
    public static let defaultMaximumFileSize = 256 << 20

    /// The format of the decoded pixels, or `nil` for the one closest to the file: ``PixelFormat/gray8``
    /// for greyscale images, ``PixelFormat/rgba32`` for images with transparency, otherwise
    /// ``PixelFormat/rgb24``.
    ///
    /// JPEG and PNG decode straight into the requested format (libjpeg-turbo's extended colour
    /// spaces, libpng's transformations). Converting colour to grey uses BT.601 luma.
    public var pixelFormat: PixelFormat?

    /// Whether to rotate and flip the pixels as the EXIF orientation tag says.
    ///
    /// Read from the JPEG APP1 segment or the PNG eXIf chunk. On by default; the orientation is reported in ``DecodedImage/orientation`` either way.
    public var appliesOrientation: Bool

    /// Whether to leave the turning to the consumer: with ``appliesOrientation`` on, the
    /// pixels come back as stored (``DecodedImage/isUpright`` is then `false` for a turned
    /// photo), while ``region`` is still read in upright pixels.
    ///
    /// Off by default. `ImageTensorizer` turns such images while it resizes them
    /// (``ImageResizer/resize(_:from:orientation:into:)``), which saves copying a large photo
    /// column by column.
    public var defersOrientation = false

    /// The most pixels (width x height, as stored in the header) a file may have.
    ///
    /// Larger images are refused from the header, before any pixel memory is allocated.
    public var maximumPixelCount: Int

    /// The largest file, in bytes, that ``ImageDecoder`` reads (or accepts in memory).
    ///
    /// Checked with `fstat` before reading, so a huge or sparse file is refused without
    /// allocating anything.
    public var maximumFileSize: Int

    /// The smallest size the decoded (upright) image needs, or `nil` for full resolution.
    ///
    /// For JPEG the decoder then picks the smallest DCT scale `n/8` (libjpeg-turbo's scaled
    /// IDCT, n in 1...8) that keeps both dimensions at least this large, which is much faster
    /// than decoding everything and resizing. A WebP still is decoded at the smallest of 1/8,
    /// 1/4 and 1/2 that keeps it (libwebp's rescaler averages the decoded macroblocks down).
    /// Other formats ignore it.
    public var minimumSize: PixelSize?

    /// Whether ``minimumSize`` picks only among the scales 1/8, 1/4, 1/2 and 1, as Pillow's
    /// `draft()` does: off by default.
    ///
    /// libjpeg-turbo runs those scales' IDCTs with SIMD on x86-64 and the others (3/8, 5/8,
    /// 3/4, 7/8) in plain C, so a power of two is faster even where it keeps more pixels (on
    /// phone-like photos, 7% more images per second).
    public var scalesByPowersOfTwo = false

    /// Which scans of a progressive JPEG a scaled decode (``minimumSize``) reads:
    /// ``ProgressiveScans/needed`` by default, which gives the pixels of a decode of every scan.
    public var progressiveScans = ProgressiveScans.needed

    /// The smallest embedded thumbnail that may be decoded instead of the image, or `nil` (the
    /// default) to always decode the image itself.
    ///
    /// A HEIC from a phone carries a small thumbnail (`thmb`, 320 pixels wide on an iPhone) beside
    /// its grid of tiles. When one is at least this large (upright, both sides), smaller than the
    /// image and of its shape, it is decoded instead, as a JPEG is decoded at a DCT scale:
    /// ``DecodedImage/fullSize`` is then the thumbnail's and ``DecodedImage/storedSize`` the
    /// image's. Other formats ignore it. A thumbnail whose coded image is not the size it declares
    /// is not used. Its content is trusted, as the file says it: nothing compares it with the
    /// image, so a file whose thumbnail shows something else is judged by its thumbnail.
    public var minimumThumbnailSize: PixelSize?

    /// The part of the (upright) image to decode: ``DecodingRegion/whole`` by default.
    ///
    /// JPEGs then decode only the rows and columns that hold the region (libjpeg-turbo's
    /// `jpeg_skip_scanlines` and `jpeg_crop_scanline`), and a HEIC grid (a phone's photo) only
    /// the tiles that do (7 of 8 columns of a 12 MP photo's for the centre square); those pixels
    /// are byte for byte the ones a full decode gives; ``DecodedImage/region`` says where the
    /// returned pixels lie. Other formats decode everything.
    public var region: DecodingRegion

    /// Creates options.
    ///
    /// - Parameters:
    ///   - pixelFormat: The decoded format, or `nil` for the file's own.
    ///   - appliesOrientation: Whether to honour the EXIF orientation.
    ///   - maximumPixelCount: The largest width x height accepted.
    ///   - minimumSize: The smallest size JPEG DCT scaling may produce, or `nil`.
    ///   - maximumFileSize: The largest file accepted, in bytes.
    ///   - region: The part of the image to decode.
    public init(
        pixelFormat: PixelFormat? = nil, appliesOrientation: Bool = true,
        maximumPixelCount: Int = DecodingOptions.defaultMaximumPixelCount, minimumSize: PixelSize? = nil,
        maximumFileSize: Int = DecodingOptions.defaultMaximumFileSize, region: DecodingRegion = .whole
    ) {
        self.region = region
        self.pixelFormat = pixelFormat
        self.appliesOrientation = appliesOrientation
        self.maximumPixelCount = maximumPixelCount
        self.maximumFileSize = maximumFileSize
        self.minimumSize = minimumSize
    }
}
