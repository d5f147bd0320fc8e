import Foundation
import NetRunnerImage
import NetRunnerSupport
import NetRunnerTestSupport
import Testing

@testable import NetRunner
@testable import NetRunnerEvaluation

/// The results gallery (`netrunner report`) and photos a browser cannot draw: the page embeds
/// every photo as a JPEG thumbnail made by the command's own decoder, never the file itself, so
/// a HEIC or a TIFF shows (upright) in Chromium and Firefox as a JPEG does (the issue of HEIC
/// photos shown black on serve's page).
@Suite("The results gallery shows HEIC, AVIF and TIFF photos as JPEGs")
struct ResultsGalleryPhotoFormatsTests {
    @Test(
        "Each photo's thumbnail is a JPEG data URI, upright, with the photo's own size for the boxes",
        arguments: [
            ("heic_irot.heic", 97, 131), ("heic_plain.heic", 131, 97), ("avif_plain.avif", 131, 97),
            ("tiff_orientation6.tif", 97, 131),
        ])
    func thumbnails(name: String, width: Int, height: Int) throws {
        let path = Fixtures.path("Tests/Fixtures/Formats/" + name)
        let thumbnail = try #require(Thumbnail.make(path: path, longerSide: 200))
        let html = ResultsGallery.render(
            [ResultsLine(image: path, error: "not run")], thumbnails: [ExactString(path): thumbnail], title: "r.jsonl")
        let open = try #require(html.range(of: "<script type=\"application/json\" id=\"data\">"))
        let close = try #require(html[open.upperBound...].range(of: "</script>"))
        struct Entry: Decodable {
            var thumbnail: String?
            var width: Int?
            var height: Int?
        }
        let entries = try JSONDecoder().decode(
            [Entry].self, from: Data(html[open.upperBound..<close.lowerBound].utf8))
        let entry = try #require(entries.first)
        #expect(entry.width == width && entry.height == height, "\(name)")
        let prefix = "data:image/jpeg;base64,"
        let uri = try #require(entry.thumbnail)
        #expect(uri.hasPrefix(prefix), "\(name)")
        let jpeg = try #require(Data(base64Encoded: String(uri.dropFirst(prefix.count))))
        #expect(ImageFormat.sniff(jpeg.prefix(12)) == .jpeg, "\(name)")
        let pixels = try PixelBuffer(data: jpeg)
        // Small photos keep their size: upright, as the photo is shown.
        #expect(pixels.width == width && pixels.height == height, "\(name): \(pixels)")
    }
}
