import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// WebP, GIF, TIFF, 16-bit PNG, HEIC and AVIF against Pillow (pillow-heif for HEIC) on the
/// fixtures of tools/images/make_format_fixtures.py: the decoded, upright RGB pixels, as a
/// user's `Image.open(f)` + `ImageOps.exif_transpose` + `convert("RGB")` gives them.
@Suite("Photo formats against Pillow")
struct PhotoFormatTests {
    static let folder = "Tests/Fixtures/Formats/"

    struct Index: Decodable {
        struct Entry: Decodable {
            let width: Int
            let height: Int
            let mode: String
            let exercises: String
        }
        let decoded: [String: Entry]
        let refused: [String: String]
        let libheif: String
    }

    static func index() throws -> Index {
        try JSONDecoder().decode(Index.self, from: Fixtures.data(folder + "formats.json"))
    }

    /// The fixtures decoded by the same library versions' arithmetic as Pillow's, or by
    /// lossless formats: equal byte for byte.
    static let exact = [
        "webp_lossy.webp", "webp_lossless.webp", "webp_alpha.webp", "webp_animated.webp", "gif_palette.gif",
        "gif_transparent.gif", "gif_interlaced.gif", "gif_animated.gif", "tiff_rgb_lzw.tif", "tiff_rgb_raw.tif",
        "tiff_rgba_deflate.tif", "tiff_gray_packbits.tif", "tiff_jpeg.tif", "tiff_orientation6.tif",
    ]

    /// 16-bit TIFFs and PNGs, narrowed to 8 bits as Pillow does: grey clipped at 255 (its mode
    /// "I;16" converted to RGB), colour by each sample's high byte.
    static let sixteenBit = [
        "tiff_gray16.tif", "tiff_gray16_be_deflate.tif", "tiff_rgb16.tif", "tiff_rgb16_be_tiled.tif",
        "tiff_rgba16.tif", "tiff_rgba16_premultiplied.tif", "png_gray16.png", "png_rgba16.png",
    ]

    /// HEIC and AVIF: Debian's libheif 1.19 (libde265, dav1d) against pillow-heif's libheif
    /// 1.23.6 and Pillow's libavif 1.4.2 with libyuv; the same coded pixels (HEVC and AV1
    /// decoding are normative), converted to RGB and transformed as those libraries do
    /// (heif_decode.c): nearest-sample chroma for HEIC, libyuv's bilinear arithmetic for AVIF,
    /// and libheif 1.23's corrected border upsampling where a rotation or mirror meets an odd side.
    static let heif = [
        "heic_plain.heic", "heic_irot.heic", "heic_irot_even.heic", "heic_rotate_mirror.heic", "heic_alpha.heic",
        "avif_plain.avif", "avif_irot_limited.avif", "avif_444.avif",
    ]

    static func difference(_ ours: [UInt8], _ theirs: [UInt8]) -> (max: Int, mean: Double, equal: Double) {
        var largest = 0
        var total = 0
        var same = 0
        for (a, b) in zip(ours, theirs) {
            let d = abs(Int(a) - Int(b))
            largest = max(largest, d)
            total += d
            if d == 0 { same += 1 }
        }
        return (largest, Double(total) / Double(max(ours.count, 1)), Double(same) / Double(max(ours.count, 1)))
    }

    /// Decodes `name` as RGB and compares it with Pillow's recorded pixels.
    static func compare(_ name: String, options: DecodingOptions = DecodingOptions(pixelFormat: .rgb24)) throws -> (
        image: DecodedImage, largest: Int, mean: Double, equal: Double
    ) {
        let entry = try #require(try index().decoded[name])
        let image = try ImageDecoder.decode(data: Fixtures.data(folder + name), options: options)
        #expect(image.pixels.width == entry.width && image.pixels.height == entry.height, "\(name)")
        let expected = try [UInt8](Fixtures.data(folder + name.split(separator: ".")[0] + ".rgb"))
        var ours = image.pixels.packedBytes
        if image.pixels.format == .rgba32 {
            ours = stride(from: 0, to: ours.count, by: 4).flatMap { ours[$0..<($0 + 3)] }
        } else if image.pixels.format == .gray8 {
            ours = ours.flatMap { [$0, $0, $0] }
        }
        try #require(ours.count == expected.count, "\(name): \(ours.count) bytes, Pillow's \(expected.count)")
        let (largest, mean, equal) = difference(ours, expected)
        return (image, largest, mean, equal)
    }

    @Test("WebP, GIF and TIFF decode to Pillow's pixels byte for byte", arguments: exact)
    func exactFormats(name: String) throws {
        let (_, largest, mean, _) = try Self.compare(name)
        #expect(largest == 0, "\(name): max |difference| \(largest), mean \(mean)")
    }

    @Test("16-bit TIFFs and PNGs decode to Pillow's 8-bit pixels byte for byte", arguments: sixteenBit)
    func sixteenBitFormats(name: String) throws {
        let (_, largest, mean, _) = try Self.compare(name)
        #expect(largest == 0, "\(name): max |difference| \(largest), mean \(mean)")
        // Asked for nothing, a colour file keeps its alpha and a grey one stays grey: the same
        // pixels in the layout the file has.
        let (natural, largestNatural, _, _) = try Self.compare(name, options: DecodingOptions())
        #expect(largestNatural == 0, "\(name) in its own layout: max |difference| \(largestNatural)")
        let entry = try #require(try Self.index().decoded[name])
        let layout: PixelFormat = entry.mode.hasPrefix("I;16") ? .gray8 : entry.mode == "RGBA" ? .rgba32 : .rgb24
        #expect(natural.pixels.format == layout, "\(name): \(natural.pixels.format)")
    }

    /// WebP stills decode scaled for ``DecodingOptions/minimumSize`` (libwebp's rescaler, by
    /// powers of two as JPEG), close to the full decode resized by our bilinear filter; an
    /// animation keeps its size.
    @Test(
        "A WebP still decodes scaled to the minimum size; an animation does not",
        arguments: ["webp_lossy.webp", "webp_lossless.webp", "webp_alpha.webp", "webp_animated.webp"])
    func scaledWebP(name: String) throws {
        let data = try Fixtures.data(Self.folder + name)  // 131x97
        let whole = try ImageDecoder.decode(data: data, options: DecodingOptions(pixelFormat: .rgb24))
        for (minimum, numerator, size) in [
            (PixelSize(width: 60, height: 40), 4, PixelSize(width: 66, height: 49)),
            (.square(20), 2, PixelSize(width: 33, height: 25)),
            (.square(90), 8, PixelSize(width: 131, height: 97)),
        ] {
            let image = try ImageDecoder.decode(
                data: data, options: DecodingOptions(pixelFormat: .rgb24, minimumSize: minimum))
            let animated = name == "webp_animated.webp"
            #expect(image.scaleNumerator == (animated ? 8 : numerator), "\(name) \(minimum)")
            #expect(image.pixels.size == (animated ? whole.pixels.size : size), "\(name) \(minimum)")
            #expect(image.storedSize == whole.pixels.size)
            let resized = try ImageResizer().resize(whole.pixels, to: image.pixels.size)
            let (_, mean, _) = Self.difference(image.pixels.packedBytes, resized.packedBytes)
            // Two filters averaging a small, detailed fixture: up to 4.1 levels measured at 1/4.
            #expect(mean < 6, "\(name) \(minimum): mean |difference| from the full decode resized \(mean)")
        }
    }

    @Test("HEIC and AVIF decode upright to pillow-heif's and Pillow's pixels byte for byte", arguments: heif)
    func heifFormats(name: String) throws {
        let (image, largest, mean, equal) = try Self.compare(name)
        #expect(image.format == (name.hasSuffix(".avif") ? .avif : .heif))
        #expect(largest == 0, "\(name): max |difference| \(largest), mean \(mean), equal \(equal)")
        // With its alpha (asked for nothing), the colour is the same.
        let (withAlpha, largestWithAlpha, _, _) = try Self.compare(name, options: DecodingOptions())
        #expect(largestWithAlpha == 0, "\(name) decoded as \(withAlpha.pixels.format): max \(largestWithAlpha)")
        #expect((withAlpha.pixels.format == .rgba32) == (name == "heic_alpha.heic"), "\(name)")
    }

    @Test("TIFFs other than 8- and 16-bit grey, RGB and RGBA are refused, naming what they are")
    func refusedTIFFs() throws {
        for (name, what) in try Self.index().refused {
            let data = try Fixtures.data(Self.folder + name)
            do {
                _ = try ImageDecoder.decode(data: data, source: name)
                Issue.record("\(name) (\(what)) decoded")
            } catch {
                guard case .unsupportedVariant(_, let format, let detail) = error else {
                    Issue.record("\(name): \(error)")
                    continue
                }
                #expect(format == .tiff)
                #expect(detail.contains("8- and 16-bit grey, RGB and RGBA TIFFs are decoded"), "\(detail)")
            }
        }
    }

    @Test("Each format cut short is a clear error, never a crash", arguments: exact + sixteenBit + heif)
    func truncated(name: String) throws {
        let data = try Fixtures.data(Self.folder + name)
        for fraction in [0.05, 0.3, 0.6, 0.95] {
            let cut = data.prefix(Int(Double(data.count) * fraction))
            do {
                _ = try ImageDecoder.decode(data: cut, source: name)
                // A file cut after what is decoded (metadata, an animation's later frames) decodes.
                #expect(fraction > 0.9 || name.contains("animated"), "\(name) cut to \(cut.count) bytes decoded")
            } catch {
                #expect(error.description.contains(name), "\(error)")
            }
        }
    }

    /// A fixture with its header's size set to `width` x `height`.
    static func inflated(_ name: String, width: Int, height: Int) throws -> Data {
        var bytes = try [UInt8](Fixtures.data(folder + name))
        func le(_ value: Int, at offset: Int, width size: Int) {
            for index in 0..<size { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        }
        func be(_ value: Int, at offset: Int) {
            for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * (3 - index))) }
        }
        switch name.split(separator: ".").last {
        case "gif":
            le(width, at: 6, width: 2)
            le(height, at: 8, width: 2)
        case "webp":
            // VP8L (lossless): 14 bits each of width - 1 and height - 1 after the signature byte.
            let chunk = 12
            precondition(bytes[(chunk)..<(chunk + 4)].elementsEqual("VP8L".utf8))
            let packed = (width - 1) | (height - 1) << 14
            le(packed | Int(bytes[chunk + 12] >> 4 & 0x0F) << 28, at: chunk + 9, width: 4)
        case "tif":
            let ifd = bytes[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) }
            let entries = Int(bytes[ifd]) | Int(bytes[ifd + 1]) << 8
            for entry in 0..<entries {
                let at = ifd + 2 + 12 * entry
                let tag = Int(bytes[at]) | Int(bytes[at + 1]) << 8
                let type = Int(bytes[at + 2]) | Int(bytes[at + 3]) << 8
                let value = tag == 256 ? width : tag == 257 ? height : nil
                if let value { le(value, at: at + 8, width: type == 3 ? 2 : 4) }
            }
        default:
            // HEIF/AVIF: every ispe box.
            var position = 0
            while let found = (position..<(bytes.count - 4)).first(where: {
                bytes[$0..<($0 + 4)].elementsEqual("ispe".utf8)
            }) {
                be(width, at: found + 8)
                be(height, at: found + 12)
                position = found + 4
            }
        }
        return Data(bytes)
    }

    @Test(
        "A decompression bomb in each format is refused from its header, before its pixels exist",
        arguments: ["gif_palette.gif", "webp_lossless.webp", "tiff_rgb_lzw.tif", "heic_plain.heic", "avif_plain.avif"])
    func bombs(name: String) throws {
        let clock = ContinuousClock()
        let start = clock.now
        let (width, height) =
            name.hasSuffix(".gif") ? (65_535, 65_535) : name.hasSuffix(".webp") ? (16_384, 16_384) : (60_000, 60_000)
        let data = try Self.inflated(name, width: width, height: height)
        do {
            _ = try ImageDecoder.decode(data: data, source: name)
            Issue.record("\(name) claiming \(width)x\(height) decoded")
        } catch {
            switch error {
            case .tooManyPixels(_, let w, let h, _):
                #expect(w == width && h == height, "\(name): \(error)")
            case .corrupt(_, _, let reason), .unsupportedVariant(_, _, let reason):
                // libheif refuses sides past the limit itself, with its own words.
                #expect(name.hasSuffix(".heic") || name.hasSuffix(".avif"), "\(name): \(error)")
                #expect(reason.lowercased().contains("limit") || reason.lowercased().contains("size"), "\(reason)")
            default:
                Issue.record("\(name): \(error)")
            }
        }
        // A small limit applies to these formats as to JPEG.
        #expect(throws: ImageError.self) {
            try ImageDecoder.decode(
                data: Fixtures.data(Self.folder + name), options: DecodingOptions(maximumPixelCount: 1000))
        }
        #expect(clock.now - start < .seconds(5))
    }

    @Test("The formats are recognised from their bytes, whatever the file's name")
    func sniffing() throws {
        let expected: [String: ImageFormat] = [
            "webp_lossy.webp": .webp, "gif_palette.gif": .gif, "tiff_rgb_lzw.tif": .tiff, "heic_plain.heic": .heif,
            "avif_plain.avif": .avif,
        ]
        for (name, format) in expected {
            #expect(ImageFormat.sniff(try Fixtures.data(Self.folder + name).prefix(12)) == format, "\(name)")
        }
    }
}
