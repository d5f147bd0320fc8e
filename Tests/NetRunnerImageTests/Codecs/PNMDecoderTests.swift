import Foundation
import NetRunnerImage
import Testing

@Suite("PNM decoding")
struct PNMDecoderTests {
    @Test("Binary and ASCII graymaps and pixmaps decode, comments included")
    func variants() throws {
        let gray: [UInt8] = [0, 10, 20, 30, 40, 255]
        let p5 = Data("P5\n# comment\n3 2\n255\n".utf8) + Data(gray)
        #expect(try PixelBuffer(data: p5) == PixelBuffer(width: 3, height: 2, format: .gray8, bytes: gray))
        let p2 = Data("P2 3 2 255\n0 10 20\n30 40 255\n".utf8)
        #expect(try PixelBuffer(data: p2) == PixelBuffer(width: 3, height: 2, format: .gray8, bytes: gray))
        let rgb: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 1, 2, 3]
        let p6 = Data("P6 2 2 255 ".utf8) + Data(rgb)
        #expect(try PixelBuffer(data: p6) == PixelBuffer(width: 2, height: 2, format: .rgb24, bytes: rgb))
        let p3 = Data("P3\n2 2\n255\n255 0 0  0 255 0\n0 0 255  1 2 3".utf8)
        #expect(try PixelBuffer(data: p3) == PixelBuffer(width: 2, height: 2, format: .rgb24, bytes: rgb))
    }

    @Test("Other maxvals, 16-bit included, are scaled to 8 bits")
    func maxval() throws {
        let p5 = Data("P5 3 1 65535\n".utf8) + Data([0x00, 0x00, 0x80, 0x00, 0xFF, 0xFF])
        #expect(try PixelBuffer(data: p5).packedBytes == [0, 128, 255])
        let p2 = Data("P2 3 1 15\n0 8 15\n".utf8)
        #expect(try PixelBuffer(data: p2).packedBytes == [0, 136, 255])
    }

    @Test("Bitmaps, bad headers, out-of-range samples and short files throw")
    func errors() {
        #expect(throws: ImageError.unsupportedVariant(source: "image data", format: .pnm, detail: "P1 bitmaps")) {
            try ImageDecoder.decode(data: Data("P1 1 1 1".utf8))
        }
        #expect(throws: ImageError.unsupportedVariant(source: "image data", format: .pnm, detail: "P4 bitmaps")) {
            try ImageDecoder.decode(data: Data("P4 1 1 ".utf8) + Data([0]))
        }
        #expect(throws: ImageError.corrupt(source: "image data", format: .pnm, reason: "maxval 0 is outside 1...65535"))
        {
            try ImageDecoder.decode(data: Data("P5 1 1 0\n".utf8) + Data([0]))
        }
        #expect(
            throws: ImageError.corrupt(
                source: "image data", format: .pnm, reason: "sample 300 is larger than maxval 255")
        ) {
            try ImageDecoder.decode(data: Data("P2 2 1 255\n300 1\n".utf8))
        }
        #expect(
            throws: ImageError.corrupt(
                source: "image data", format: .pnm, reason: "expected a number for the height, found byte 120")
        ) {
            try ImageDecoder.decode(data: Data("P5 1 x 255\n".utf8))
        }
        #expect(throws: ImageError.corrupt(source: "image data", format: .pnm, reason: "the width has too many digits"))
        {
            try ImageDecoder.decode(data: Data("P5 99999999999999999999 1 255\n".utf8))
        }
        #expect(throws: ImageError.truncated(source: "image data", format: .pnm)) {
            try ImageDecoder.decode(data: Data("P6 4 4 255\n".utf8) + Data([1, 2, 3]))
        }
        #expect(throws: ImageError.truncated(source: "image data", format: .pnm)) {
            try ImageDecoder.decode(data: Data("P6 4".utf8))
        }
        #expect(throws: ImageError.truncated(source: "image data", format: .pnm)) {
            try ImageDecoder.decode(data: Data("P3 1 1 255\n1 2 ".utf8))
        }
        #expect(throws: ImageError.truncated(source: "image data", format: .pnm)) {
            try ImageDecoder.decode(data: Data("P2 3 1 255\n1 2\n".utf8) + Data("   ".utf8))
        }
    }
}
