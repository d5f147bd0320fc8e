// PNG decoding through the CImageCodecs libpng shim.
//
// Invariants: the nr_png_decoder handle is closed on every path (defer) and never outlives the
// byte buffer it reads; the eXIf chunk is found by EXIFReader (libpng skips it); the destination
// is a freshly allocated PixelBuffer of exactly the header's size in the configured layout,
// and its capacity is passed so the shim can check its writes.

internal import CImageCodecs

enum PNGDecoder {
    static func decode(_ bytes: UnsafeRawBufferPointer, _ context: DecodeContext) throws(ImageError) -> DecodedImage {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw .emptyFile(source: context.source)
        }
        // Check the IHDR size before libpng reads anything more, so a huge header in a short
        // file is refused as too large rather than as truncated.
        let reader = UInt8Reader(bytes: bytes)
        if reader.starts(with: Array("IHDR".utf8), at: 12), let width = reader.u32(16, bigEndian: true),
            let height = reader.u32(20, bigEndian: true), width > 0, height > 0
        {
            try context.checkSize(width: width, height: height)
        }
        var status: Int32 = 0
        guard let decoder = nr_png_open(base, bytes.count, max(context.options.maximumPixelCount, 1), &status) else {
            throw .outOfMemory(byteCount: 0)
        }
        defer { nr_png_close(decoder) }
        func failure(_ status: Int32, byteCount: Int = 0) -> ImageError {
            context.error(status: status, message: String(cString: nr_png_message(decoder)), byteCount: byteCount)
        }
        guard status == NR_CODEC_OK else { throw failure(status) }
        var width: Int32 = 0
        var height: Int32 = 0
        var bitDepth: Int32 = 0
        var colorType: Int32 = 0
        var interlaced: Int32 = 0
        var hasAlpha: Int32 = 0
        nr_png_header(decoder, &width, &height, &bitDepth, &colorType, &interlaced, &hasAlpha)
        try context.checkSize(width: Int(width), height: Int(height))
        let orientation = EXIFReader.pngOrientation(bytes) ?? .up
        let isColor = colorType & 2 != 0 || colorType & 1 != 0
        let natural: PixelFormat = hasAlpha != 0 ? .rgba32 : isColor ? .rgb24 : .gray8
        var pixelFormat = context.options.pixelFormat ?? natural
        if pixelFormat == .gray8 && isColor {
            pixelFormat = hasAlpha != 0 ? .rgba32 : .rgb24  // converted to grey by ImageDecoder
        }
        status = nr_png_configure(decoder, DecodeContext.layout(pixelFormat))
        guard status == NR_CODEC_OK else { throw failure(status) }
        let pixels = try context.decodePixels(width: Int(width), height: Int(height), format: pixelFormat) {
            nr_png_decode(decoder, $0, $1, $2)
        } failure: {
            failure($0, byteCount: $1)
        }
        return DecodedImage(
            pixels: pixels, format: .png, orientation: orientation,
            storedSize: PixelSize(width: Int(width), height: Int(height)))
    }
}
