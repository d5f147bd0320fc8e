import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// Decoding only the centre square (libjpeg-turbo's `jpeg_crop_scanline` and
/// `jpeg_skip_scanlines`) must give, inside the square, exactly the pixels of a full decode:
/// the model input is then the one a full decode followed by the crop gives, byte for byte.
@Suite("JPEG region decoding: the kept pixels are a full decode's")
struct RegionDecodingTests {
    /// The variants of tools/images/make_jpeg_variants.py, the Adobe CMYK fixture and the
    /// eight small orientation fixtures.
    static let files: [String] =
        [
            "wide_444", "wide_422", "wide_420", "wide_420_progressive", "wide_444_progressive", "wide_gray",
            "tall_420", "tall_422_progressive", "tall_gray_progressive", "slim_420", "slim_420_progressive",
            "wide_420_restarts", "wide_420_orientation6", "wide_422_orientation8", "tall_420_orientation7",
            "tall_444_orientation3",
        ].map { "Tests/Fixtures/ImageReference/variants/\($0).jpg" }
        + ["Tests/Fixtures/ImageReference/cmyk.jpg"]
        + (1...8).map { "Tests/Fixtures/ImageReference/orientation_\($0).jpg" }

    static let formats: [PixelFormat?] = [nil, .rgb24, .gray8, .bgra32]

    @Test("Inside the centre square, every pixel equals the full decode's", arguments: files, formats)
    func centreSquareEqualsFullDecode(file: String, format: PixelFormat?) throws {
        let data = try Fixtures.data(file)
        // Full scale, and the DCT scales 4/8 and 2/8 (the fast path's), with and without EXIF.
        for minimum in [nil, PixelSize.square(48), PixelSize.square(24)] {
            for upright in [true, false] {
                var options = DecodingOptions(pixelFormat: format, appliesOrientation: upright, minimumSize: minimum)
                let whole = try ImageDecoder.decode(data: data, options: options, source: file)
                options.region = .centerSquare
                let part = try ImageDecoder.decode(data: data, options: options, source: file)
                let context =
                    "\(file) \(format.map { "\($0)" } ?? "own format") minimum \(minimum.map { "\($0)" } ?? "none") upright \(upright)"
                #expect(part.fullSize == whole.pixels.size, "\(context)")
                #expect(part.scaleNumerator == whole.scaleNumerator, "\(context)")
                #expect(part.orientedSize(sameAs: whole), "\(context)")
                let square = PixelRect.centerSquare(in: whole.pixels.size)
                let held = part.region
                #expect(
                    held.x <= square.x && held.y <= square.y && held.x + held.width >= square.x + square.width
                        && held.y + held.height >= square.y + square.height,
                    "\(context): \(held) does not hold \(square)")
                #expect(part.pixels.size == held.size, "\(context)")
                let expected = try whole.pixels.cropped(to: square)
                let local = PixelRect(
                    x: square.x - held.x, y: square.y - held.y, width: square.width, height: square.height)
                let got = try part.pixels.cropped(to: local)
                #expect(got.format == expected.format, "\(context)")
                let difference = ByteDifference(got.packedBytes, expected.packedBytes)
                #expect(difference.maximum == 0, "\(context): \(difference)")
            }
        }
    }

    @Test("Decoding the square reads fewer pixels than the whole image when the photo is not square")
    func decodesLess() throws {
        for name in ["wide_420", "tall_420", "slim_420_progressive", "wide_420_orientation6"] {
            let file = "Tests/Fixtures/ImageReference/variants/\(name).jpg"
            let image = try ImageDecoder.decode(
                data: try Fixtures.data(file), options: DecodingOptions(region: .centerSquare), source: file)
            let square = PixelRect.centerSquare(in: image.fullSize)
            #expect(image.pixels.width * image.pixels.height < image.fullSize.width * image.fullSize.height, "\(file)")
            // At most one block column of margin on each side beyond the square, plus the alignment.
            #expect(image.region.width <= square.width + 2 * 16 + 15, "\(file): \(image.region)")
            #expect(image.region.height <= square.height + 2 * 16 + 15, "\(file): \(image.region)")
        }
    }

    /// The rows below the square are still read (entropy-decoded), so a file cut short there
    /// is refused as the full decode refuses it; a model never sees a half-read file.
    @Test("A file cut short below the square fails as the full decode fails")
    func truncatedBelowTheSquare() throws {
        for name in ["slim_420", "slim_420_progressive"] {
            let file = "Tests/Fixtures/ImageReference/variants/\(name).jpg"
            let data = try Fixtures.data(file)
            let cut = data.prefix(data.count * 92 / 100)
            let full = #expect(throws: ImageError.self) {
                try ImageDecoder.decode(data: cut, options: DecodingOptions())
            }
            var options = DecodingOptions()
            options.region = .centerSquare
            let part = #expect(throws: ImageError.self) { try ImageDecoder.decode(data: cut, options: options) }
            #expect(part.map { "\($0)" } == full.map { "\($0)" }, "\(file)")
            #expect(full.map { "\($0)" }?.contains("truncated") == true, "\(file): \(String(describing: full))")
        }
    }
}

extension DecodedImage {
    /// Whether both decodes report the same original size after orientation.
    fileprivate func orientedSize(sameAs other: DecodedImage) -> Bool {
        storedSize == other.storedSize && orientation == other.orientation && fullSize == other.fullSize
    }
}
