import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@Suite("EXIF orientation in JPEG APP1 and PNG eXIf")
struct EXIFReaderTests {
    /// JPEG fixtures are lossy, so quadrant centres are compared within 3 levels; PNG exactly.
    @Test(
        "Each orientation 1-8 is read and applied like Pillow's exif_transpose",
        arguments: ImageReference.shared.orientations)
    func orientationApplied(fixture: ImageReference.Orientation) throws {
        let path = Fixtures.path(ImageReference.folder + fixture.file)
        let image = try ImageDecoder.decode(contentsOf: path, options: .init(pixelFormat: .rgb24))
        #expect(image.orientation.rawValue == fixture.orientation)
        #expect(image.storedSize == PixelSize(width: 32, height: 16))
        #expect(image.pixels.size == PixelSize(width: fixture.width, height: fixture.height))
        let tolerance = fixture.file.hasSuffix(".jpg") ? 3 : 0
        for sample in fixture.samples {
            let value = image.pixels.pixel(x: sample.x, y: sample.y).map(Int.init)
            #expect(
                zip(value, sample.value).allSatisfy { abs($0 - $1) <= tolerance },
                "at \(sample.x), \(sample.y): \(value)")
        }
    }

    @Test("Orientation can be ignored, leaving the stored pixels", arguments: [6, 8])
    func orientationIgnored(value: Int) throws {
        let path = Fixtures.path(ImageReference.folder + "orientation_\(value).png")
        let stored = try ImageDecoder.decode(contentsOf: path, options: .init(appliesOrientation: false))
        #expect(stored.orientation.rawValue == value)
        #expect(stored.pixels.size == PixelSize(width: 32, height: 16))
        let upright = try PixelBuffer(contentsOf: path)
        #expect(stored.pixels.applyingOrientation(try #require(ImageOrientation(rawValue: value))) == upright)
    }

    @Test("DCT scaling accounts for a rotated orientation's swapped sides")
    func scalingWithRotation() throws {
        let path = Fixtures.path(ImageReference.folder + "orientation_6.jpg")
        let image = try ImageDecoder.decode(
            contentsOf: path, options: .init(minimumSize: PixelSize(width: 8, height: 16)))
        // Stored 32x16; upright 16x32. Needing 8x16 upright means 16x8 stored: scale 4/8.
        #expect(image.scaleNumerator == 4)
        #expect(image.pixels.size == PixelSize(width: 8, height: 16))
    }

    @Test("Photos without EXIF orientation are upright")
    func noOrientation() throws {
        for photo in ImageReference.testPhotos {
            #expect(try ImageDecoder.decode(contentsOf: Fixtures.path(photo.file)).orientation == .up)
        }
    }
}
