import NetRunnerImage
import NetRunnerTestSupport
import Testing

@Suite("Centre crop and resize against Pillow")
struct PixelBufferResizeTests {
    /// Our full decode + centre square + bilinear 224x224 equals `tools/models/photo_prep.py`
    /// (Pillow 13) bit for bit on every committed test photo. The asserted tolerance is the
    /// contract: at most 1 per channel on >= 99.9 % of values and at most 2 anywhere.
    @Test(
        "Centre thumbnail of each test photo matches Pillow's crop + BILINEAR resize",
        arguments: ImageReference.testPhotos)
    func centerThumbnailMatchesPillow(photo: ImageReference.Photo) throws {
        let image = try PixelBuffer(contentsOf: Fixtures.path(photo.file), options: .init(pixelFormat: .rgb24))
        let thumbnail = try image.centerThumbnail(ofSize: .square(224))
        let expected = try ImageReference.bytes(try #require(photo.center224))
        let difference = ByteDifference(thumbnail.packedBytes, expected)
        #expect(thumbnail.size == .square(224))
        #expect(difference.total == 150_528)
        #expect(difference.maximum <= 2, "\(difference)")
        #expect(difference.withinOne >= 0.999, "\(difference)")
        #expect(difference.maximum == 0, "achieved: \(difference)")
    }

    @Test(
        "Resizing a region of a photo matches Pillow when shrinking and enlarging",
        arguments: ImageReference.shared.regions)
    func regionMatchesPillow(region: ImageReference.Region) throws {
        let image = try PixelBuffer(contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png"))
        let resized = try image.resized(
            from: PixelRect(x: region.x, y: region.y, width: region.width, height: region.height),
            to: PixelSize(width: region.outWidth, height: region.outHeight))
        let difference = ByteDifference(resized.packedBytes, try ImageReference.bytes(region.file))
        #expect(difference.total == region.outWidth * region.outHeight * 3)
        #expect(difference.maximum == 0, "\(difference)")
    }
}
