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

    @Test("RLE and 16-bit bitmaps are refused with a clear reason")
    func unsupported() {
        let rle =
            SyntheticImages.bmpHeader(
                width: 4, height: 4, bitsPerPixel: 8, compression: 1, paletteCount: 0, dataSize: 16)
            + [UInt8](repeating: 0, count: 16)
        #expect(throws: ImageError.unsupportedVariant(source: "image data", format: .bmp, detail: "RLE8 compression")) {
            try ImageDecoder.decode(data: Data(rle))
        }
        let rle4 = SyntheticImages.bmpHeader(
            width: 4, height: 4, bitsPerPixel: 4, compression: 2, paletteCount: 0, dataSize: 16)
        #expect(throws: ImageError.unsupportedVariant(source: "image data", format: .bmp, detail: "RLE4 compression")) {
            try ImageDecoder.decode(data: Data(rle4))
        }
        let sixteen = SyntheticImages.bmpHeader(
            width: 4, height: 4, bitsPerPixel: 16, compression: 0, paletteCount: 0, dataSize: 32)
        #expect(throws: ImageError.unsupportedVariant(source: "image data", format: .bmp, detail: "16 bits per pixel"))
        {
            try ImageDecoder.decode(data: Data(sixteen + [UInt8](repeating: 0, count: 32)))
        }
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
