// Windows bitmap decoding, written by hand: uncompressed 1/4/8-bit palette, 24-bit and 32-bit
// (BI_RGB or BI_BITFIELDS), bottom-up and top-down.
//
// Invariants: header fields are read through UInt8Reader (nil past the end); before the pixel
// buffer is allocated the size passes the pixel limit and the file is checked to hold every
// row (`pixelOffset + stride * height <= count`), so the row loops read only inside `bytes`.
// Palette indices past the palette give black instead of reading past it.

enum BMPDecoder {
    static func decode(_ bytes: UnsafeRawBufferPointer, _ context: DecodeContext) throws(ImageError) -> DecodedImage {
        let reader = UInt8Reader(bytes: bytes)
        let source = context.source
        func corrupt(_ reason: String) -> ImageError { .corrupt(source: source, format: .bmp, reason: reason) }
        func unsupported(_ detail: String) -> ImageError {
            .unsupportedVariant(source: source, format: .bmp, detail: detail)
        }
        guard let pixelOffset = reader.u32(10, bigEndian: false), let headerSize = reader.u32(14, bigEndian: false)
        else { throw .truncated(source: source, format: .bmp) }
        let width: Int
        let signedHeight: Int
        let bitsPerPixel: Int
        var compression = 0
        var colorsUsed = 0
        var paletteEntrySize = 4
        var masks: [Int] = []
        switch headerSize {
        case 12:
            guard let w = reader.u16(18, bigEndian: false), let h = reader.u16(20, bigEndian: false),
                let bits = reader.u16(24, bigEndian: false)
            else { throw .truncated(source: source, format: .bmp) }
            (width, signedHeight, bitsPerPixel, paletteEntrySize) = (w, h, bits, 3)
        case 40, 52, 56, 64, 108, 124:
            guard let w = reader.i32(18, bigEndian: false), let h = reader.i32(22, bigEndian: false),
                let bits = reader.u16(28, bigEndian: false), let method = reader.u32(30, bigEndian: false),
                let used = reader.u32(46, bigEndian: false)
            else { throw .truncated(source: source, format: .bmp) }
            (width, signedHeight, bitsPerPixel, compression, colorsUsed) = (w, h, bits, method, used)
            if compression == 3 || compression == 6 {
                let count = compression == 6 ? 4 : 3
                // The masks follow a 40-byte header, or sit inside a longer one at the same place.
                for index in 0..<count {
                    guard let mask = reader.u32(54 + 4 * index, bigEndian: false) else {
                        throw .truncated(source: source, format: .bmp)
                    }
                    masks.append(mask)
                }
                if compression == 3, headerSize >= 56, let alpha = reader.u32(66, bigEndian: false) {
                    masks.append(alpha)
                }
            }
        default:
            throw unsupported("a \(headerSize)-byte DIB header (expected 12, 40, 52, 56, 108 or 124)")
        }
        switch compression {
        case 0, 3, 6: break
        case 1: throw unsupported("RLE8 compression")
        case 2: throw unsupported("RLE4 compression")
        case 4: throw unsupported("embedded JPEG data")
        case 5: throw unsupported("embedded PNG data")
        default: throw corrupt("unknown compression method \(compression)")
        }
        switch bitsPerPixel {
        case 1, 4, 8, 24: if compression != 0 { throw corrupt("bit fields with \(bitsPerPixel) bits per pixel") }
        case 32: break
        case 16: throw unsupported("16 bits per pixel")
        default: throw corrupt("\(bitsPerPixel) bits per pixel")
        }
        guard signedHeight != Int(Int32.min) else { throw corrupt("height out of range") }
        let height = abs(signedHeight)
        let topDown = signedHeight < 0
        try context.checkSize(width: width, height: height)
        let stride = (width * bitsPerPixel + 31) / 32 * 4
        guard pixelOffset <= bytes.count, (bytes.count - pixelOffset) / stride >= height else {
            throw .truncated(source: source, format: .bmp)
        }
        // Palette: after the header (and the 12 mask bytes of a 40-byte BI_BITFIELDS header).
        var palette: [(UInt8, UInt8, UInt8)] = []
        if bitsPerPixel <= 8 {
            let maximum = 1 << bitsPerPixel
            let count = colorsUsed == 0 ? maximum : min(colorsUsed, maximum)
            let start = 14 + headerSize
            for index in 0..<count {
                let entry = start + index * paletteEntrySize
                guard entry + 3 <= pixelOffset, let blue = reader.byte(entry), let green = reader.byte(entry + 1),
                    let red = reader.byte(entry + 2)
                else { break }
                palette.append((UInt8(red), UInt8(green), UInt8(blue)))
            }
        }
        // Bit fields: shift and width of each channel mask.
        let defaultMasks = [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0]
        let channelMasks = bitsPerPixel == 32 ? (masks.isEmpty ? defaultMasks : masks + [0, 0, 0, 0]) : defaultMasks
        let fields = channelMasks.prefix(4).map(BitField.init)
        let hasAlpha = bitsPerPixel == 32 && fields[3].width > 0
        let format: PixelFormat = hasAlpha ? .rgba32 : .rgb24
        var pixels = try PixelBuffer(width: width, height: height, format: format)
        let outStride = pixels.bytesPerRow
        let channels = format.bytesPerPixel
        pixels.withUnsafeMutableBytes { output in
            // The common case, 24-bit BGR, row by row with the channel swap as the only work.
            if bitsPerPixel == 24, let input = bytes.baseAddress, let target = output.baseAddress {
                for row in 0..<height {
                    let source = (input + pixelOffset + (topDown ? row : height - 1 - row) * stride)
                        .assumingMemoryBound(to: UInt8.self)
                    let destination = (target + row * outStride).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<width {
                        destination[3 * x] = source[3 * x + 2]
                        destination[3 * x + 1] = source[3 * x + 1]
                        destination[3 * x + 2] = source[3 * x]
                    }
                }
                return
            }
            for row in 0..<height {
                let sourceRow = pixelOffset + (topDown ? row : height - 1 - row) * stride
                let out = row * outStride
                for x in 0..<width {
                    let pixel = out + x * channels
                    switch bitsPerPixel {
                    case 24:
                        let at = sourceRow + x * 3
                        output[pixel] = bytes[at + 2]
                        output[pixel + 1] = bytes[at + 1]
                        output[pixel + 2] = bytes[at]
                    case 32:
                        let at = sourceRow + x * 4
                        let value =
                            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3])
                            << 24
                        for channel in 0..<channels { output[pixel + channel] = fields[channel].extract(value) }
                    default:
                        let bitOffset = x * bitsPerPixel
                        let byte = Int(bytes[sourceRow + bitOffset / 8])
                        let shift = 8 - bitsPerPixel - bitOffset % 8
                        let index = (byte >> shift) & ((1 << bitsPerPixel) - 1)
                        let color = index < palette.count ? palette[index] : (0, 0, 0)
                        output[pixel] = color.0
                        output[pixel + 1] = color.1
                        output[pixel + 2] = color.2
                    }
                }
            }
        }
        return DecodedImage(
            pixels: pixels, format: .bmp, orientation: .up, storedSize: PixelSize(width: width, height: height))
    }

    /// One channel of a BI_BITFIELDS mask, scaled to 8 bits.
    private struct BitField {
        let mask: Int
        let shift: Int
        let width: Int

        init(_ mask: Int) {
            self.mask = mask
            var shift = 0
            while shift < 32 && mask >> shift & 1 == 0 { shift += 1 }
            var width = 0
            while shift + width < 32 && mask >> (shift + width) & 1 == 1 { width += 1 }
            self.shift = shift
            self.width = width
        }

        func extract(_ value: Int) -> UInt8 {
            guard width > 0 else { return 255 }
            let raw = (value & mask) >> shift
            let maximum = (1 << width) - 1
            return UInt8(truncatingIfNeeded: width == 8 ? raw : (raw * 255 + maximum / 2) / maximum)
        }
    }
}
