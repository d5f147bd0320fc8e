import Foundation
import NetRunnerImage
import Testing

@Suite("BMP decoding")
struct BMPDecoderTests {
    static let width = 7
    static let height = 5
    static let rgb = SyntheticImages.pattern(width: width, height: height)

    @Test("24- and 32-bit bitmaps decode bottom-up and top-down", arguments: [24, 32], [false, true])
    func trueColor(bitsPerPixel: Int, topDown: Bool) throws {
        let file = SyntheticImages.bmp(
            width: Self.width, height: Self.height, rgb: Self.rgb, bitsPerPixel: bitsPerPixel, topDown: topDown)
        let image = try ImageDecoder.decode(data: Data(file))
        #expect(image.format == .bmp)
        #expect(image.pixels.format == .rgb24)
        #expect(image.pixels.packedBytes == Self.rgb)
    }

    @Test("1-, 4- and 8-bit palette bitmaps decode", arguments: [1, 4, 8])
    func palette(bitsPerPixel: Int) throws {
        let count = 1 << bitsPerPixel
        let palette = (0..<count).map {
            [UInt8($0 * 255 / (count - 1)), UInt8(($0 * 7) % 256), UInt8(255 - $0 * 255 / (count - 1))]
        }
        let indices = (0..<(Self.width * Self.height)).map { ($0 * 5 + $0 / 3) % count }
        let file = SyntheticImages.bmp(
            width: Self.width, height: Self.height, rgb: [], bitsPerPixel: bitsPerPixel, palette: palette,
            indices: indices)
        let image = try PixelBuffer(data: Data(file))
        #expect(image.packedBytes == indices.flatMap { palette[$0] })
    }

    /// A BMP with a 40-byte header, `palette` (RGB triples) and `data` as its pixel bytes.
    static func bmp(
        width: Int, height: Int, bits: Int, compression: Int, palette: [[UInt8]] = [], masks: [Int] = [], data: [UInt8]
    ) -> Data {
        precondition(palette.isEmpty || masks.isEmpty)
        var bytes = SyntheticImages.bmpHeader(
            width: width, height: height, bitsPerPixel: bits, compression: compression,
            paletteCount: palette.count + masks.count, dataSize: data.count)
        for color in palette { bytes += [color[2], color[1], color[0], 0] }
        for mask in masks { bytes += SyntheticImages.le32(mask) }
        return Data(bytes + data)
    }

    @Test("16-bit bitmaps: 5-5-5 and 5-6-5 bit fields, scaled as Pillow does (value * 255 / maximum)")
    func sixteenBit() throws {
        // 2x2, bottom row first, rows padded to 4 bytes (2 pixels x 2 bytes: no padding).
        let rgb555 = [0x03E0, 0x0010, 0x7FFF, 0x7C00].flatMap { SyntheticImages.le16($0) }
        let image555 = try PixelBuffer(data: Self.bmp(width: 2, height: 2, bits: 16, compression: 0, data: rgb555))
        // top row: white, red; bottom row: green, blue 16 -> 16 * 255 / 31 = 131
        #expect(image555.packedBytes == [255, 255, 255, 255, 0, 0, 0, 255, 0, 0, 0, 131])
        #expect(image555.format == .rgb24)

        let rgb565 = [0x0020, 0x8410, 0xF800, 0x07E0].flatMap { SyntheticImages.le16($0) }
        let image565 = try PixelBuffer(
            data: Self.bmp(
                width: 2, height: 2, bits: 16, compression: 3, masks: [0xF800, 0x07E0, 0x001F], data: rgb565))
        // 0x0020: green 1 -> 1 * 255 / 63 = 4; 0x8410: red 16 -> 131, green 32 -> 129, blue 16 -> 131
        #expect(image565.packedBytes == [255, 0, 0, 0, 255, 0, 0, 4, 0, 131, 129, 131])

        // 3x1: rows padded to 8 bytes; a short file is truncated.
        let padded = [0x7C00, 0x03E0, 0x001F, 0].flatMap { SyntheticImages.le16($0) }
        let image = try PixelBuffer(data: Self.bmp(width: 3, height: 1, bits: 16, compression: 0, data: padded))
        #expect(image.packedBytes == [255, 0, 0, 0, 255, 0, 0, 0, 255])
        #expect(throws: ImageError.truncated(source: "image data", format: .bmp)) {
            try ImageDecoder.decode(data: Self.bmp(width: 3, height: 1, bits: 16, compression: 0, data: [1, 2, 3]))
        }
    }

    static let rlePalette: [[UInt8]] = (0..<16).map { (index: Int) -> [UInt8] in
        [UInt8(index * 10), UInt8(index * 16), UInt8(index * 15)]
    }

    @Test("RLE8: runs, absolute runs with padding, end of line, delta and end of bitmap")
    func rle8() throws {
        let data: [UInt8] = [
            0x02, 0x01,  // bottom row: 2 x index 1
            0x00, 0x03, 0x02, 0x03, 0x01, 0x00,  // absolute: 2, 3, 1, padded to 4 bytes
            0x00, 0x00,  // end of line
            0x00, 0x02, 0x02, 0x01,  // delta: 2 right, 1 up (skips the middle row and 2 pixels)
            0x03, 0x03,  // top row, from x = 2: 3 x index 3
            0x00, 0x01,  // end of bitmap
        ]
        let file = Self.bmp(width: 5, height: 3, bits: 8, compression: 1, palette: Self.rlePalette, data: data)
        let image = try PixelBuffer(data: file)
        let indices = [0, 0, 3, 3, 3, 0, 0, 0, 0, 0, 1, 1, 2, 3, 1]
        #expect(image.packedBytes == indices.flatMap { Self.rlePalette[$0] })
        // Without its last two commands the data ends before the image does.
        #expect(throws: ImageError.truncated(source: "image data", format: .bmp)) {
            try ImageDecoder.decode(
                data: Self.bmp(
                    width: 5, height: 3, bits: 8, compression: 1, palette: Self.rlePalette, data: Array(data.prefix(14))
                ))
        }
        // Runs longer than the row are clipped to it.
        let long = Self.bmp(
            width: 2, height: 1, bits: 8, compression: 1, palette: Self.rlePalette, data: [0xFF, 0x04, 0x00, 0x01])
        #expect(try PixelBuffer(data: long).packedBytes == Self.rlePalette[4] + Self.rlePalette[4])
    }

    @Test("RLE4: alternating nibble runs and absolute nibbles")
    func rle4() throws {
        let data: [UInt8] = [
            0x05, 0x12,  // bottom row: 1, 2, 1, 2, 1
            0x00, 0x00,  // end of line
            0x00, 0x05, 0x34, 0x56, 0x70, 0x00,  // absolute: 3, 4, 5, 6, 7 (3 bytes, padded to 4)
            0x00, 0x01,  // end of bitmap
        ]
        let file = Self.bmp(width: 5, height: 2, bits: 4, compression: 2, palette: Self.rlePalette, data: data)
        let image = try PixelBuffer(data: file)
        #expect(image.packedBytes == [3, 4, 5, 6, 7, 1, 2, 1, 2, 1].flatMap { Self.rlePalette[$0] })
    }

    @Test("RLE with the wrong depth or top-down, and embedded JPEG/PNG, are refused with a reason")
    func refused() {
        #expect(
            throws: ImageError.corrupt(
                source: "image data", format: .bmp, reason: "RLE8 compression with 4 bits per pixel")
        ) { try ImageDecoder.decode(data: Self.bmp(width: 2, height: 2, bits: 4, compression: 1, data: [0, 1])) }
        #expect(
            throws: ImageError.corrupt(
                source: "image data", format: .bmp, reason: "a top-down (negative height) RLE bitmap")
        ) { try ImageDecoder.decode(data: Self.bmp(width: 2, height: -2, bits: 8, compression: 1, data: [0, 1])) }
        #expect(
            throws: ImageError.unsupportedVariant(source: "image data", format: .bmp, detail: "embedded JPEG data")
        ) { try ImageDecoder.decode(data: Self.bmp(width: 2, height: 2, bits: 24, compression: 4, data: [0, 1])) }
    }

    @Test("Truncated and nonsensical bitmaps throw")
    func damaged() {
        let file = SyntheticImages.bmp(width: Self.width, height: Self.height, rgb: Self.rgb)
        #expect(throws: ImageError.truncated(source: "image data", format: .bmp)) {
            try ImageDecoder.decode(data: Data(file.dropLast(5)))
        }
        #expect(throws: ImageError.truncated(source: "image data", format: .bmp)) {
            try ImageDecoder.decode(data: Data(file.prefix(20)))
        }
        let zero = SyntheticImages.bmpHeader(
            width: 0, height: 3, bitsPerPixel: 24, compression: 0, paletteCount: 0, dataSize: 0)
        #expect(
            throws: ImageError.corrupt(source: "image data", format: .bmp, reason: "the header gives a size of 0x3")
        ) {
            try ImageDecoder.decode(data: Data(zero))
        }
        let odd = SyntheticImages.bmpHeader(
            width: 2, height: 2, bitsPerPixel: 7, compression: 0, paletteCount: 0, dataSize: 0)
        #expect(throws: ImageError.corrupt(source: "image data", format: .bmp, reason: "7 bits per pixel")) {
            try ImageDecoder.decode(data: Data(odd))
        }
    }
}
