// Windows bitmap decoding, written by hand: uncompressed 1/4/8-bit palette, 16-bit (5-5-5 or
// BI_BITFIELDS), 24-bit and 32-bit (BI_RGB or BI_BITFIELDS), RLE8 and RLE4, bottom-up and
// top-down.
//
// Invariants: header fields are read through UInt8Reader (nil past the end), and every size
// or offset computed from them is checked arithmetic (DecodeContext.product/sum: a `.corrupt`
// error, never a trap). Before the pixel buffer is allocated the size passes the pixel limit
// and, for uncompressed data, the file is checked to hold every row
// (`pixelOffset + stride * height <= count`), so the row loops read only inside `bytes`. RLE
// data is read through bounds checks, each command consumes at least two bytes and writes at
// most 255 indices, each only inside the image, so hostile RLE data costs O(file + pixels).
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
        case 0, 1, 2, 3, 6: break
        case 4: throw unsupported("embedded JPEG data")
        case 5: throw unsupported("embedded PNG data")
        default: throw corrupt("unknown compression method \(compression)")
        }
        let isRLE = compression == 1 || compression == 2
        switch bitsPerPixel {
        case 1, 4, 8, 24:
            if compression == 3 || compression == 6 { throw corrupt("bit fields with \(bitsPerPixel) bits per pixel") }
            if compression == 1 && bitsPerPixel != 8 {
                throw corrupt("RLE8 compression with \(bitsPerPixel) bits per pixel")
            }
            if compression == 2 && bitsPerPixel != 4 {
                throw corrupt("RLE4 compression with \(bitsPerPixel) bits per pixel")
            }
        case 16, 32: if isRLE { throw corrupt("RLE compression with \(bitsPerPixel) bits per pixel") }
        default: throw corrupt("\(bitsPerPixel) bits per pixel")
        }
        guard signedHeight != Int(Int32.min) else { throw corrupt("height out of range") }
        let height = abs(signedHeight)
        let topDown = signedHeight < 0
        if isRLE && topDown { throw corrupt("a top-down (negative height) RLE bitmap") }
        try context.checkSize(width: width, height: height)
        let stride = try context.product(
            context.sum(context.product(width, bitsPerPixel, "row size"), 31, "row size") / 32, 4, "row size")
        guard pixelOffset <= bytes.count, isRLE || (bytes.count - pixelOffset) / stride >= height else {
            throw .truncated(source: source, format: .bmp)
        }
        // Palette: after the header (and the 12 mask bytes of a 40-byte BI_BITFIELDS header).
        var palette: [(UInt8, UInt8, UInt8)] = []
        if bitsPerPixel <= 8 {
            let maximum = 1 << bitsPerPixel
            let count = colorsUsed == 0 ? maximum : min(colorsUsed, maximum)
            let start = 14 + headerSize  // headerSize is one of the known sizes
            for index in 0..<count {
                let entry = start + index * paletteEntrySize  // count <= 256
                guard entry + 3 <= pixelOffset, let blue = reader.byte(entry), let green = reader.byte(entry + 1),
                    let red = reader.byte(entry + 2)
                else { break }
                palette.append((UInt8(red), UInt8(green), UInt8(blue)))
            }
        }
        if isRLE {
            // The indices go to a grey buffer first: allocation failures are errors, not traps.
            var indices = try PixelBuffer(width: width, height: height, format: .gray8)
            try indices.withUnsafeMutableBytes { (output) throws(ImageError) in
                try decodeRLE(
                    bytes, from: pixelOffset, into: output, width: width, height: height, nibbles: compression == 2,
                    source: source)
            }
            var pixels = try PixelBuffer(width: width, height: height, format: .rgb24)
            indices.withUnsafeBytes { input in
                pixels.withUnsafeMutableBytes { output in
                    for at in 0..<(width * height) {
                        let index = Int(input[at])
                        let color = index < palette.count ? palette[index] : (0, 0, 0)
                        output[3 * at] = color.0
                        output[3 * at + 1] = color.1
                        output[3 * at + 2] = color.2
                    }
                }
            }
            return DecodedImage(
                pixels: pixels, format: .bmp, orientation: .up, storedSize: PixelSize(width: width, height: height))
        }
        // Bit fields: shift and width of each channel mask. 16-bit BI_RGB is 5-5-5.
        let defaultMasks =
            bitsPerPixel == 16 ? [0x7C00, 0x03E0, 0x001F, 0] : [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0]
        let channelMasks = bitsPerPixel >= 16 && !masks.isEmpty ? masks + [0, 0, 0, 0] : defaultMasks
        let fields = channelMasks.prefix(4).map { BitField($0, truncating: bitsPerPixel == 16) }
        let hasAlpha = bitsPerPixel >= 16 && fields[3].width > 0
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
                    case 16:
                        let at = sourceRow + x * 2
                        let value = Int(bytes[at]) | Int(bytes[at + 1]) << 8
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

    /// Decodes RLE8 or RLE4 data into palette indices, top row first, written to `indices`.
    ///
    /// RLE4 when `nibbles`, RLE8 otherwise, from byte `start`. Pixels the data skips (end of
    /// line, delta) keep index 0, as Pillow does.
    ///
    /// - Throws: ``ImageError/truncated(source:format:)`` when the data ends before the image.
    static func decodeRLE(
        _ bytes: UnsafeRawBufferPointer, from start: Int, into indices: UnsafeMutableRawBufferPointer, width: Int,
        height: Int, nibbles: Bool, source: String
    ) throws(ImageError) {
        // `indices` holds width x height zeroed bytes (a packed gray8 PixelBuffer).
        var position = start
        var x = 0
        var y = 0  // counted from the bottom row
        func put(_ index: UInt8) {
            if x < width && y < height { indices[(height - 1 - y) * width + x] = index }
            x += 1
        }
        while y < height {
            guard position <= bytes.count - 2 else {
                // A file may end right after its last pixel, without the end-of-bitmap code.
                if y == height - 1 && x >= width { break }
                throw .truncated(source: source, format: .bmp)
            }
            let count = Int(bytes[position])
            let value = bytes[position + 1]
            position += 2
            if count > 0 {
                for i in 0..<count { put(nibbles ? (i % 2 == 0 ? value >> 4 : value & 15) : value) }
                if x > width { x = width }
                continue
            }
            switch value {
            case 0:
                x = 0
                y += 1
            case 1:
                return
            case 2:
                guard position <= bytes.count - 2 else { throw .truncated(source: source, format: .bmp) }
                x = min(x + Int(bytes[position]), width)
                y += Int(bytes[position + 1])
                position += 2
            default:
                let length = Int(value)
                let byteCount = nibbles ? (length + 1) / 2 : length
                let padded = (byteCount + 1) / 2 * 2
                guard padded <= bytes.count - position else { throw .truncated(source: source, format: .bmp) }
                for i in 0..<length {
                    let byte = bytes[position + (nibbles ? i / 2 : i)]
                    put(nibbles ? (i % 2 == 0 ? byte >> 4 : byte & 15) : byte)
                }
                if x > width { x = width }
                position += padded
            }
        }
    }

    /// One channel of a BI_BITFIELDS mask, scaled to 8 bits.
    private struct BitField {
        let mask: Int
        let shift: Int
        let width: Int
        /// Whether scaling truncates (`raw * 255 / maximum`, Pillow's 16-bit unpackers) or rounds.
        let truncating: Bool

        init(_ mask: Int, truncating: Bool = false) {
            self.truncating = truncating
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
            if width == 8 { return UInt8(truncatingIfNeeded: raw) }
            return UInt8(truncatingIfNeeded: (raw * 255 + (truncating ? 0 : maximum / 2)) / maximum)
        }
    }
}
