import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// A HEIC's embedded thumbnail (`thmb`) decoded instead of its image where the caller's
/// ``DecodingOptions/minimumThumbnailSize`` allows, against pillow-heif's decode of the same
/// thumbnail (tools/images/make_thumbnail_fixtures.py: files made by Debian's heif-enc --thumb).
@Suite("HEIC thumbnails")
struct HEICThumbnailTests {
    static let folder = "Tests/Fixtures/Thumbnails/"

    static func decode(_ name: String, minimum: PixelSize?) throws -> DecodedImage {
        var options = DecodingOptions(pixelFormat: .rgb24)
        options.minimumThumbnailSize = minimum
        return try ImageDecoder.decode(data: Fixtures.data(folder + name), options: options)
    }

    @Test("A thumbnail at least the size asked for is decoded instead: pillow-heif's pixels, the image's size kept")
    func thumbnailDecoded() throws {
        let image = try Self.decode("heic_thumbnail.heic", minimum: .square(224))
        #expect(image.pixels.size == PixelSize(width: 336, height: 224))
        #expect(image.fullSize == PixelSize(width: 336, height: 224))
        #expect(image.storedSize == PixelSize(width: 480, height: 320))
        #expect(image.orientedSize == PixelSize(width: 480, height: 320))
        #expect(image.scaleNumerator == 6, "336 of 480 is 5.6 eighths")
        let expected = try [UInt8](Fixtures.data(Self.folder + "heic_thumbnail.thumb.rgb"))
        #expect(image.pixels.packedBytes == expected, "the thumbnail as pillow-heif decodes it")
    }

    @Test(
        "The image itself when no thumbnail is large enough, or none is asked for",
        arguments: [
            ("heic_thumbnail.heic", PixelSize.square(225)), ("heic_thumbnail.heic", nil),
            ("heic_thumbnail_small.heic", PixelSize.square(128)), ("heic_thumbnail_small.heic", PixelSize.square(1)),
        ])
    func imageDecoded(name: String, minimum: PixelSize?) throws {
        let image = try Self.decode(name, minimum: minimum)
        if name == "heic_thumbnail_small.heic" && minimum == .square(1) {
            // 120x80 covers 1x1: the thumbnail.
            #expect(image.pixels.size == PixelSize(width: 120, height: 80))
            return
        }
        #expect(image.pixels.size == PixelSize(width: 480, height: 320))
        #expect(image.scaleNumerator == 8)
        let whole = try Self.decode(name, minimum: nil)
        #expect(image.pixels == whole.pixels)
    }

    /// Issue 54, finding 8: a thumbnail item whose `ispe` declares 450x300 (the image's shape,
    /// at least the size asked for) over its 336x224 coded image. The shape check is made on the
    /// declared size, so such a thumbnail was used as if it covered the input; now it is not.
    @Test("A thumbnail that decodes to another size than it declares is not used: the image instead")
    func thumbnailOfAnotherSize() throws {
        var bytes = [UInt8](try Fixtures.data(Self.folder + "heic_thumbnail.heic"))
        let ispe = Array("ispe".utf8)
        let boxes = (0..<(bytes.count - 16)).filter { Array(bytes[$0..<($0 + 4)]) == ispe }
        let thumbnail = try #require(boxes.last)
        #expect(bytes[(thumbnail + 8)..<(thumbnail + 16)] == [0, 0, 1, 0x50, 0, 0, 0, 0xE0], "336x224")
        bytes.replaceSubrange((thumbnail + 8)..<(thumbnail + 16), with: [0, 0, 1, 0xC2, 0, 0, 1, 0x2C])  // 450x300
        var options = DecodingOptions(pixelFormat: .rgb24)
        options.minimumThumbnailSize = .square(224)
        let image = try ImageDecoder.decode(data: Data(bytes), options: options)
        let whole = try ImageDecoder.decode(data: Data(bytes), options: DecodingOptions(pixelFormat: .rgb24))
        #expect(image.pixels.size == PixelSize(width: 480, height: 320))
        #expect(image.scaleNumerator == 8)
        #expect(image.pixels == whole.pixels)
    }

    @Test("Through a decoder process as in process: the option crosses, the same pixels")
    func isolated() throws {
        var options = DecodingOptions(pixelFormat: .rgb24)
        options.minimumThumbnailSize = .square(224)
        let data = try Fixtures.data(Self.folder + "heic_thumbnail.heic")
        let pool = DecoderIsolation(.init(children: 1))
        let format = try #require(ImageFormat.sniff(data.prefix(12)))
        let isolated = try pool.decode(data: data, format: format, options: options, source: "t.heic")
        let local = try ImageDecoder.decode(data: data, options: options)
        #expect(isolated == local)
        #expect(isolated.pixels.size == PixelSize(width: 336, height: 224))
    }
}
