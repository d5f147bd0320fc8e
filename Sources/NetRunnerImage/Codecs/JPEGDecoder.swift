// JPEG decoding through the CImageCodecs libjpeg-turbo shim.
//
// Invariants: the nr_jpeg_decoder handle is closed on every path (defer) and never outlives
// the byte buffer it reads; the destination buffer passed to nr_jpeg_decode is a freshly
// allocated, uniquely referenced PixelBuffer whose size is exactly the output size
// nr_jpeg_configure reported, and its capacity is passed so the shim can check its writes.

internal import CImageCodecs

enum JPEGDecoder {
    /// The smallest `n` in 1...8 (or in 1, 2, 4, 8 with `powersOfTwo`) for which libjpeg's
    /// `ceil(size * n / 8)` keeps both sides at least `minimum` (8 when none does).
    static func scaleNumerator(width: Int, height: Int, minimum: PixelSize, powersOfTwo: Bool = false) -> Int {
        for numerator in 1...8 where !powersOfTwo || numerator & (numerator - 1) == 0 {
            let scaledWidth = (width * numerator + 7) / 8
            let scaledHeight = (height * numerator + 7) / 8
            if scaledWidth >= minimum.width && scaledHeight >= minimum.height { return numerator }
        }
        return 8
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, _ context: DecodeContext) throws(ImageError) -> DecodedImage {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw .emptyFile(source: context.source)
        }
        var status: Int32 = 0
        guard let decoder = nr_jpeg_open(base, bytes.count, &status) else { throw .outOfMemory(byteCount: 0) }
        defer { nr_jpeg_close(decoder) }
        func failure(_ status: Int32, byteCount: Int = 0) -> ImageError {
            context.error(status: status, message: String(cString: nr_jpeg_message(decoder)), byteCount: byteCount)
        }
        guard status == NR_CODEC_OK else { throw failure(status) }
        var width: Int32 = 0
        var height: Int32 = 0
        var components: Int32 = 0
        nr_jpeg_header(decoder, &width, &height, &components)
        try context.checkSize(width: Int(width), height: Int(height))
        let orientation = EXIFReader.jpegOrientation(bytes) ?? .up
        let pixelFormat = context.options.pixelFormat ?? (components == 1 ? .gray8 : .rgb24)
        var numerator = 8
        if var minimum = context.options.minimumSize {
            if context.options.appliesOrientation && orientation.swapsDimensions {
                minimum = PixelSize(width: minimum.height, height: minimum.width)
            }
            numerator = scaleNumerator(
                width: Int(width), height: Int(height), minimum: minimum,
                powersOfTwo: context.options.scalesByPowersOfTwo)
        }
        var outWidth: Int32 = 0
        var outHeight: Int32 = 0
        let scans: Int32
        switch context.options.progressiveScans {
        case .all: scans = NR_JPEG_SCANS_ALL
        case .needed: scans = NR_JPEG_SCANS_EXACT
        case .lowFrequencies: scans = NR_JPEG_SCANS_APPROXIMATE
        }
        status = nr_jpeg_configure(
            decoder, DecodeContext.layout(pixelFormat), Int32(numerator), scans, &outWidth, &outHeight)
        guard status == NR_CODEC_OK else { throw failure(status) }
        try context.checkSize(width: Int(outWidth), height: Int(outHeight))
        let scaled = PixelSize(width: Int(outWidth), height: Int(outHeight))
        let stored = PixelSize(width: Int(width), height: Int(height))
        // The region, asked for in upright pixels, in the stored (scaled) image's pixels.
        let turn = context.options.appliesOrientation ? orientation : .up
        let upright = turn.swapsDimensions ? PixelSize(width: scaled.height, height: scaled.width) : scaled
        let wanted = turn.storedRect(forUpright: context.options.region.rect(in: upright), storedSize: scaled)
        guard wanted.size != scaled else {
            let pixels = try context.decodePixels(
                width: scaled.width, height: scaled.height, format: pixelFormat, writesEveryByte: true
            ) {
                nr_jpeg_decode(decoder, $0, $1, $2)
            } failure: {
                failure($0, byteCount: $1)
            }
            return DecodedImage(
                pixels: pixels, format: .jpeg, orientation: orientation, storedSize: stored,
                scaleNumerator: numerator)
        }
        var left: Int32 = 0
        var columns: Int32 = 0
        status = nr_jpeg_start_region(decoder, Int32(wanted.x), Int32(wanted.width), &left, &columns)
        guard status == NR_CODEC_OK else { throw failure(status) }
        let pixels = try context.decodePixels(
            width: Int(columns), height: wanted.height, format: pixelFormat, writesEveryByte: true
        ) {
            nr_jpeg_read_region(decoder, Int32(wanted.y), Int32(wanted.height), $0, $1, $2)
        } failure: {
            failure($0, byteCount: $1)
        }
        return DecodedImage(
            pixels: pixels, format: .jpeg, orientation: orientation, storedSize: stored, scaleNumerator: numerator,
            fullSize: scaled, region: PixelRect(x: Int(left), y: wanted.y, width: Int(columns), height: wanted.height))
    }
}
