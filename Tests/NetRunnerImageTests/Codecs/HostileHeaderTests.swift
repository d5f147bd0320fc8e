import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerImage

/// Hand-made headers whose sizes and offsets overflow or nearly overflow `Int`: each must end
/// in an `ImageError` naming the file, never in an arithmetic-overflow trap.
@Suite("Hostile headers throw, never trap")
struct HostileHeaderTests {
    static let limit = DecodingOptions.defaultMaximumPixelCount

    @Test("A 33-byte PNG claiming 0xFFFFFFFF x 0xFFFFFFFF is too many pixels, with the exact count")
    func hugePNG() throws {
        let file = SyntheticImages.pngHeader(width: 0xFFFF_FFFF, height: 0xFFFF_FFFF)
        #expect(file.count == 33)
        let expected = ImageError.tooManyPixels(
            source: "image data", width: 0xFFFF_FFFF, height: 0xFFFF_FFFF, limit: Self.limit)
        #expect(throws: expected) { try ImageDecoder.decode(data: Data(file)) }
        #expect(
            expected.description
                == "image data is 4294967295x4294967295 (18446744065119617025 pixels), more than the limit of "
                + "100000000 pixels; raise DecodingOptions.maximumPixelCount if the image is trusted.")
        // From a file, the error names the file.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = try folder.write(Data(file), named: "huge.png")
        #expect(
            throws: ImageError.tooManyPixels(source: path, width: 0xFFFF_FFFF, height: 0xFFFF_FFFF, limit: Self.limit)
        ) {
            try ImageDecoder.decode(contentsOf: path)
        }
        // Even with the pixel limit lifted, libpng's own limits refuse it.
        #expect(throws: ImageError.self) {
            try ImageDecoder.decode(data: Data(file), options: DecodingOptions(maximumPixelCount: .max))
        }
    }

    @Test("Pixel counts print exactly for any two Ints")
    func pixelCountText() {
        #expect(ImageError.pixelCountText(3, 4) == "12")
        #expect(ImageError.pixelCountText(0xFFFF_FFFF, 0xFFFF_FFFF) == "18446744065119617025")
        #expect(ImageError.pixelCountText(-0xFFFF_FFFF, 0xFFFF_FFFF) == "-18446744065119617025")
        #expect(ImageError.pixelCountText(.max, .max).hasPrefix("about 8.5"))
        #expect(ImageError.pixelCountText(.min, .max).hasPrefix("-about 8.5"))
        #expect(!ImageError.tooManyPixels(source: "x", width: .max, height: .min, limit: 1).description.isEmpty)
    }

    @Test("A JPEG claiming 65500 x 65500 is too many pixels; larger, libjpeg refuses it")
    func hugeJPEG() {
        #expect(throws: ImageError.tooManyPixels(source: "image data", width: 65500, height: 65500, limit: Self.limit))
        {
            try ImageDecoder.decode(data: Data(SyntheticImages.jpegHeader(width: 65500, height: 65500)))
        }
        #expect(
            throws: ImageError.corrupt(
                source: "image data", format: .jpeg, reason: "Maximum supported image dimension is 65500 pixels")
        ) { try ImageDecoder.decode(data: Data(SyntheticImages.jpegHeader(width: 65535, height: 65535))) }
    }

    @Test("BMP: huge, negative and extreme widths and heights")
    func hostileBMP() {
        func bmp(_ width: Int, _ height: Int, bits: Int = 24) -> Data {
            Data(
                SyntheticImages.bmpHeader(
                    width: width, height: height, bitsPerPixel: bits, compression: 0, paletteCount: 0, dataSize: 0)
                    + [UInt8](repeating: 0, count: 16))
        }
        #expect(
            throws: ImageError.tooManyPixels(
                source: "image data", width: 0x7FFF_FFFF, height: 0x7FFF_FFFF, limit: Self.limit)
        ) { try ImageDecoder.decode(data: bmp(0x7FFF_FFFF, -0x7FFF_FFFF)) }
        #expect(throws: ImageError.corrupt(source: "image data", format: .bmp, reason: "height out of range")) {
            try ImageDecoder.decode(data: bmp(4, Int(Int32.min)))
        }
        #expect(
            throws: ImageError.corrupt(source: "image data", format: .bmp, reason: "the header gives a size of -5x4")
        ) { try ImageDecoder.decode(data: bmp(-5, 4)) }
        // An RLE bitmap needs no bytes per pixel: with no pixel limit, a huge one is an
        // allocation failure, not a trap.
        let rle = Data(
            SyntheticImages.bmpHeader(
                width: 0x7FFF_FFFF, height: 0x7FFF_FFFF, bitsPerPixel: 8, compression: 1, paletteCount: 0,
                dataSize: 2) + [0, 1])
        #expect(throws: ImageError.self) {
            try ImageDecoder.decode(data: rle, options: DecodingOptions(maximumPixelCount: .max))
        }
        // With no pixel limit, the row size of a 2^31-wide 32-bit bitmap is computed, not trapped on.
        let unlimited = DecodingOptions(maximumPixelCount: .max)
        for (width, height) in [(0x7FFF_FFFF, -0x7FFF_FFFF), (0x7FFF_FFFF, 1), (1, 0x7FFF_FFFF)] {
            #expect(throws: ImageError.truncated(source: "image data", format: .bmp)) {
                try ImageDecoder.decode(data: bmp(width, height, bits: 32), options: unlimited)
            }
        }
    }

    @Test("PNM: huge sizes, 10-digit numbers and out-of-range maxvals")
    func hostilePNM() {
        func pnm(_ header: String) -> Data { Data(header.utf8 + [UInt8](repeating: 7, count: 12)) }
        #expect(
            throws: ImageError.tooManyPixels(
                source: "image data", width: 999_999_999, height: 999_999_999, limit: Self.limit)
        ) { try ImageDecoder.decode(data: pnm("P6 999999999 999999999 255\n")) }
        #expect(throws: ImageError.truncated(source: "image data", format: .pnm)) {
            try ImageDecoder.decode(
                data: pnm("P6 999999999 999999999 65535\n"), options: DecodingOptions(maximumPixelCount: .max))
        }
        #expect(throws: ImageError.truncated(source: "image data", format: .pnm)) {
            try ImageDecoder.decode(
                data: pnm("P3 999999999 999999999 65535\n"), options: DecodingOptions(maximumPixelCount: .max))
        }
        #expect(
            throws: ImageError.corrupt(source: "image data", format: .pnm, reason: "the width has too many digits")
        ) { try ImageDecoder.decode(data: pnm("P6 18446744073709551617 1 255\n")) }
        #expect(
            throws: ImageError.corrupt(source: "image data", format: .pnm, reason: "maxval 65536 is outside 1...65535")
        ) { try ImageDecoder.decode(data: pnm("P5 1 1 65536\n")) }
        #expect(
            throws: ImageError.corrupt(source: "image data", format: .pnm, reason: "maxval 0 is outside 1...65535")
        ) { try ImageDecoder.decode(data: pnm("P5 1 1 0\n")) }
    }

    @Test("EXIF: IFD offsets and reads near Int.max give no orientation")
    func hostileEXIF() {
        // A TIFF header whose IFD offset is 0xFFFFFFFF.
        let tiff: [UInt8] = [0x4D, 0x4D, 0, 42, 0xFF, 0xFF, 0xFF, 0xFF, 0, 1]
        tiff.withUnsafeBytes { raw in
            #expect(EXIFReader.orientation(tiff: raw) == nil)
            let reader = UInt8Reader(bytes: raw)
            for offset in [Int.max, Int.max - 1, Int.max - 3, Int.min, -1] {
                #expect(reader.u16(offset, bigEndian: true) == nil)
                #expect(reader.u32(offset, bigEndian: false) == nil)
                #expect(reader.i32(offset, bigEndian: true) == nil)
                #expect(!reader.starts(with: [0x4D, 0x4D], at: offset))
                #expect(EXIFReader.orientation(reader, ifd: offset, count: 0xFFFF, bigEndian: true) == nil)
            }
            #expect(!reader.starts(with: [UInt8](repeating: 0, count: 11), at: 0))
        }
    }
}
