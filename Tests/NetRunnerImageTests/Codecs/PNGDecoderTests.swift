import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@Suite("PNG decoding: every colour type, bit depth and interlacing")
struct PNGDecoderTests {
    @Test("Each PNG variant expands to the expected 8-bit pixels", arguments: ImageReference.shared.pngVariants)
    func variant(fixture: ImageReference.PNGVariant) throws {
        let path = Fixtures.path(ImageReference.folder + fixture.file)
        let rgba = try PixelBuffer(contentsOf: path, options: .init(pixelFormat: .rgba32))
        #expect(rgba.size == PixelSize(width: fixture.width, height: fixture.height))
        #expect(rgba.packedBytes == fixture.expectedRGBA)
        // Every other format is the RGBA result converted.
        for format in [PixelFormat.bgra32, .rgb24, .gray8] {
            let direct = try PixelBuffer(contentsOf: path, options: .init(pixelFormat: format))
            #expect(direct == rgba.converted(to: format), "\(format)")
        }
        let natural = try PixelBuffer(contentsOf: path)
        let hasAlpha = fixture.colorType & 4 != 0 || fixture.file.contains("trns")
        let isColor = fixture.colorType & 3 != 0
        #expect(natural.format == (hasAlpha ? .rgba32 : isColor ? .rgb24 : .gray8))
    }

    @Test("A PNG cut short is truncated; a bad CRC is corrupt")
    func damaged() throws {
        let data = try Fixtures.data("Tests/Fixtures/Photos/test/chelsea.png")
        for length in [40, data.count / 3, data.count - 13] {
            #expect(throws: ImageError.truncated(source: "image data", format: .png)) {
                try ImageDecoder.decode(data: data.prefix(length))
            }
        }
        var bytes = [UInt8](data)
        bytes[30] ^= 0x01  // IHDR's CRC (bytes 29...32) no longer matches
        #expect {
            try ImageDecoder.decode(data: Data(bytes))
        } throws: { error in
            guard case ImageError.corrupt(source: "image data", format: .png, let reason) = error else { return false }
            return reason.contains("CRC")
        }
    }
}
