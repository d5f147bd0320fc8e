// WebP, GIF, TIFF and HEIF/AVIF decoding through the CImageCodecs shims over Debian's
// libwebp, giflib, libtiff and libheif.
//
// Invariants: each decoder learns the image's size from the header first and checks it against
// the pixel limit before any pixel memory exists (a decompression bomb is refused there); the
// destination is a fresh PixelBuffer of exactly that size in the shim's layout, whose capacity
// the shim checks; C handles are closed on every path (defer) and never outlive the bytes.
// Colour images decode to RGB (RGBA when the file has alpha and the caller did not ask for a
// format); ImageDecoder converts to the format asked for, as for PNG.

internal import CImageCodecs

/// Copies a shim's message buffer into a String.
private func message(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The layout to decode a colour image in: RGBA only when it has alpha and no format was asked
/// for (or RGBA/BGRA was), else RGB.
private func colourLayout(hasAlpha: Bool, _ context: DecodeContext) -> PixelFormat {
    switch context.options.pixelFormat {
    case .rgba32?, .bgra32?: hasAlpha ? .rgba32 : .rgb24
    case nil: hasAlpha ? .rgba32 : .rgb24
    default: .rgb24
    }
}

/// What a shim's header call found: the size, the layout to decode in, the orientation, and
/// the size to decode at where the decoder scales while decoding (WebP).
private struct ShimHeader {
    var width: Int32 = 0
    var height: Int32 = 0
    var format: PixelFormat = .rgb24
    var orientation: ImageOrientation = .up
    /// The size decoded, `nil` for the stored size.
    var scaled: PixelSize?
    /// `n` of the scale `n/8` (8: full size).
    var scaleNumerator = 8
}

/// The decoders whose shim is a pair of calls over the whole file: a header call, then a
/// decode into the caller's rows.
///
/// Reads the header, checks the size against the pixel limit, allocates, decodes; a failing
/// status becomes the ``ImageError`` for the shim's message.
private func decodeWithShim(
    _ bytes: UnsafeRawBufferPointer, _ context: DecodeContext,
    header: (_ data: UnsafePointer<UInt8>, _ size: Int, _ found: inout ShimHeader, _ message: inout [CChar]) -> Int32,
    decode: (
        _ data: UnsafePointer<UInt8>, _ size: Int, _ found: ShimHeader, _ destination: UnsafeMutablePointer<UInt8>,
        _ bytesPerRow: Int, _ capacity: Int, _ message: inout [CChar]
    ) -> Int32
) throws(ImageError) -> DecodedImage {
    guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
        throw .emptyFile(source: context.source)
    }
    var text = [CChar](repeating: 0, count: Int(NR_CODEC_MESSAGE_SIZE))
    var found = ShimHeader()
    let status = header(base, bytes.count, &found, &text)
    guard status == NR_CODEC_OK else { throw context.error(status: status, message: message(text)) }
    try context.checkSize(width: Int(found.width), height: Int(found.height))
    let stored = PixelSize(width: Int(found.width), height: Int(found.height))
    let decoded = found.scaled ?? stored
    let pixels = try context.decodePixels(
        width: decoded.width, height: decoded.height, format: found.format, writesEveryByte: true
    ) {
        decode(base, bytes.count, found, $0, $1, $2, &text)
    } failure: {
        context.error(status: $0, message: message(text), byteCount: $1)
    }
    return DecodedImage(
        pixels: pixels, format: context.format, orientation: found.orientation, storedSize: stored,
        scaleNumerator: found.scaleNumerator)
}

enum WebPDecoder {
    static func decode(_ bytes: UnsafeRawBufferPointer, _ context: DecodeContext) throws(ImageError) -> DecodedImage {
        try decodeWithShim(bytes, context) { data, size, found, text in
            var hasAlpha: Int32 = 0
            var animated: Int32 = 0
            let status = nr_webp_info(data, size, &found.width, &found.height, &hasAlpha, &animated, &text)
            found.format = colourLayout(hasAlpha: hasAlpha != 0, context)
            if status == NR_CODEC_OK, animated == 0, let minimum = context.options.minimumSize {
                // By powers of two, as JPEG's fast path: libwebp averages the decoded macroblocks down
                // (use_scaling), which skips the colour conversion and resize of the full size.
                found.scaleNumerator = JPEGDecoder.scaleNumerator(
                    width: Int(found.width), height: Int(found.height), minimum: minimum, powersOfTwo: true)
                if found.scaleNumerator < 8 {
                    found.scaled = PixelSize(
                        width: (Int(found.width) * found.scaleNumerator + 7) / 8,
                        height: (Int(found.height) * found.scaleNumerator + 7) / 8)
                }
            }
            return status
        } decode: { data, size, found, destination, bytesPerRow, capacity, text in
            nr_webp_decode(
                data, size, found.format == .rgba32 ? 1 : 0, Int32(found.scaled?.width ?? 0),
                Int32(found.scaled?.height ?? 0), destination, bytesPerRow, capacity, &text)
        }
    }
}

enum GIFDecoder {
    static func decode(_ bytes: UnsafeRawBufferPointer, _ context: DecodeContext) throws(ImageError) -> DecodedImage {
        try decodeWithShim(bytes, context) { data, size, found, text in
            nr_gif_info(data, size, &found.width, &found.height, &text)
        } decode: { data, size, _, destination, bytesPerRow, capacity, text in
            nr_gif_decode(
                data, size, UInt64(max(context.options.maximumPixelCount, 1)), destination, bytesPerRow, capacity,
                &text)
        }
    }
}

enum TIFFDecoder {
    static func decode(_ bytes: UnsafeRawBufferPointer, _ context: DecodeContext) throws(ImageError) -> DecodedImage {
        try decodeWithShim(bytes, context) { data, size, found, text in
            var samples: Int32 = 0
            var orientation: Int32 = 1
            let status = nr_tiff_info(data, size, &found.width, &found.height, &samples, &orientation, &text)
            found.format = samples == 1 ? .gray8 : samples == 4 ? .rgba32 : .rgb24
            found.orientation = ImageOrientation(rawValue: Int(orientation)) ?? .up
            return status
        } decode: { data, size, _, destination, bytesPerRow, capacity, text in
            nr_tiff_decode(data, size, destination, bytesPerRow, capacity, &text)
        }
    }
}

enum HEIFDecoder {
    /// The pixels a tile is charged at least: decoding a tile costs a fixed setup (about 6 ms
    /// of libde265 on this project's machines, the time of some 50,000 pixels) besides its
    /// pixels, so a grid of many tiny tiles is charged as if each were 256 x 256.
    static let pixelsChargedPerTile = 256 * 256

    /// Decodes the image, or its thumbnail where ``DecodingOptions/minimumThumbnailSize`` allows
    /// and `thumbnails` is true.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, _ context: DecodeContext, thumbnails: Bool = true
    ) throws(ImageError) -> DecodedImage {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw .emptyFile(source: context.source)
        }
        // libheif itself refuses an image past the pixel limit, and more tiles than the pixel
        // limit pays for, before it decodes anything (its security limits); the sizes are also
        // checked below, with our own error.
        let limit = max(context.options.maximumPixelCount, 1)
        var status: Int32 = 0
        guard
            let decoder = nr_heif_open(
                base, bytes.count, UInt64(limit), UInt64(max(limit / pixelsChargedPerTile, 1)), &status)
        else {
            throw .outOfMemory(byteCount: 0)
        }
        defer { nr_heif_close(decoder) }
        func failure(_ status: Int32, byteCount: Int = 0) -> ImageError {
            context.error(status: status, message: String(cString: nr_heif_message(decoder)), byteCount: byteCount)
        }
        guard status == NR_CODEC_OK else { throw failure(status) }
        var width: Int32 = 0
        var height: Int32 = 0
        var hasAlpha: Int32 = 0
        nr_heif_header(decoder, &width, &height, &hasAlpha)
        try context.checkSize(width: Int(width), height: Int(height))
        try checkTiling(decoder, context)
        // The thumbnail instead, when one is large enough (a phone's HEIC: a 320-pixel HEVC image
        // instead of 48 tiles of 512x512); its own tiling is checked as the image's was.
        var fromThumbnail = false
        var thumbnailWidth: Int32 = 0
        var thumbnailHeight: Int32 = 0
        if thumbnails, let wanted = context.options.minimumThumbnailSize, wanted.width > 0, wanted.height > 0 {
            if nr_heif_use_thumbnail(
                decoder, UInt32(clamping: wanted.width), UInt32(clamping: wanted.height), &thumbnailWidth,
                &thumbnailHeight) == 1
            {
                fromThumbnail = true
                try checkTiling(decoder, context)
            }
        }
        let format = colourLayout(hasAlpha: hasAlpha != 0, context)
        if !fromThumbnail, context.format == .heif, format == .rgb24, context.options.region != .whole,
            let image = try decodeRegion(decoder, context, size: PixelSize(width: Int(width), height: Int(height)))
        {
            return image
        }
        var decodedWidth: Int32 = 0
        var decodedHeight: Int32 = 0
        // An AVIF is converted to RGB as Pillow's libavif does, a HEIC as pillow-heif's libheif.
        status = nr_heif_decode(
            decoder, format == .rgba32 ? 1 : 0, context.format == .avif ? 1 : 0, &decodedWidth, &decodedHeight)
        guard status == NR_CODEC_OK else { throw failure(status) }
        // A thumbnail whose coded image is not the size its item declares (the size the shape
        // check above was made on) is not trusted: the image itself is decoded instead.
        if fromThumbnail, decodedWidth != thumbnailWidth || decodedHeight != thumbnailHeight {
            return try decode(bytes, context, thumbnails: false)
        }
        try context.checkSize(width: Int(decodedWidth), height: Int(decodedHeight))
        let pixels = try context.decodePixels(
            width: Int(decodedWidth), height: Int(decodedHeight), format: format, writesEveryByte: true
        ) {
            nr_heif_copy(decoder, $0, $1, $2)
        } failure: {
            failure($0, byteCount: $1)
        }
        // From a thumbnail, the image's own size is what boxes and crops are placed in.
        let eighths = !fromThumbnail ? 8 : max(1, min(8, (Int(decodedWidth) * 16 / max(Int(width), 1) + 1) / 2))
        return DecodedImage(
            pixels: pixels, format: context.format, orientation: .up,
            storedSize: PixelSize(width: Int(width), height: Int(height)), scaleNumerator: eighths)
    }

    /// Decodes only the grid tiles that cover ``DecodingOptions/region``, or returns `nil`.
    ///
    /// A phone's centre square is 7 of 8 columns of tiles. `nil` where the shim would decode
    /// them all or does not handle the file (`nr_heif_decode_region`). The pixels there are a
    /// whole decode's.
    private static func decodeRegion(
        _ decoder: OpaquePointer, _ context: DecodeContext, size: PixelSize
    ) throws(ImageError) -> DecodedImage? {
        let wanted = context.options.region.rect(in: size)
        var left: Int32 = 0
        var top: Int32 = 0
        var width: Int32 = 0
        var height: Int32 = 0
        let status = nr_heif_decode_region(
            decoder, 0, Int32(wanted.x), Int32(wanted.y), Int32(wanted.width), Int32(wanted.height), &left, &top,
            &width, &height)
        guard status != -1 else { return nil }
        func failure(_ status: Int32, byteCount: Int = 0) -> ImageError {
            context.error(status: status, message: String(cString: nr_heif_message(decoder)), byteCount: byteCount)
        }
        guard status == NR_CODEC_OK else { throw failure(status) }
        let pixels = try context.decodePixels(
            width: Int(width), height: Int(height), format: .rgb24, writesEveryByte: true
        ) {
            nr_heif_copy(decoder, $0, $1, $2)
        } failure: {
            failure($0, byteCount: $1)
        }
        return DecodedImage(
            pixels: pixels, format: context.format, orientation: .up, storedSize: size, scaleNumerator: 8,
            fullSize: size, region: PixelRect(x: Int(left), y: Int(top), width: Int(width), height: Int(height)))
    }

    /// Checks what the decode will really do, which a file may declare apart from its `ispe`
    /// size: a grid's own output size against the pixel limit, its tiles, each charged at least
    /// ``pixelsChargedPerTile``, and their sides against the chroma subsampling (an odd side of
    /// subsampled tiles, which the region decode declines too, is refused for the whole decode).
    private static func checkTiling(_ decoder: OpaquePointer, _ context: DecodeContext) throws(ImageError) {
        var width: UInt32 = 0
        var height: UInt32 = 0
        var tiles: UInt32 = 0
        var tileWidth: UInt32 = 0
        var tileHeight: UInt32 = 0
        var misfitChroma: Int32 = 0
        let status = nr_heif_tiling(decoder, &width, &height, &tiles, &tileWidth, &tileHeight, &misfitChroma)
        guard status == NR_CODEC_OK else {
            throw context.error(status: status, message: String(cString: nr_heif_message(decoder)))
        }
        // Debian's libheif 1.19.7 writes such a grid's chroma past the end of its plane (a heap
        // overflow that may corrupt the process without crashing it): refused before decoding.
        guard misfitChroma == 0 else {
            let subsampling = misfitChroma == 422 ? "4:2:2" : "4:2:0"
            throw .unsupportedVariant(
                source: context.source, format: context.format,
                detail: "this \(context.format) grid has \(tileWidth)x\(tileHeight) tiles of \(subsampling) chroma, "
                    + "which libheif 1.19 decodes into memory it does not own; refused")
        }
        try context.checkSize(width: Int(width), height: Int(height))
        let charged = Int(tiles).multipliedReportingOverflow(by: pixelsChargedPerTile)
        guard !charged.overflow, charged.partialValue <= context.options.maximumPixelCount else {
            throw .unsupportedVariant(
                source: context.source, format: context.format,
                detail: "a grid of \(tiles) tiles of \(tileWidth)x\(tileHeight) costs more to decode than "
                    + "\(context.options.maximumPixelCount) pixels (each tile counts as at least \(pixelsChargedPerTile))"
            )
        }
    }
}
