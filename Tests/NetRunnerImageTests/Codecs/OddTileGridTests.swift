import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerImage

/// Issue 54, finding 1: a grid of odd-sided 4:2:0 tiles (63x63 here; 511, 1023, 4095 alike) made
/// Debian's libheif 1.19.7 write past its chroma plane, and the decoder child that corrupted its
/// heap was kept for other users' photos. Such grids are refused before libheif decodes them, in
/// process and in the children; a child is retired after any anomaly and after a bounded number
/// of decodes; the parent believes no geometry the child sends that the file does not declare.
@Suite("Odd-tiled grids, retired children, checked answers")
struct OddTileGridTests {
    static let odd = "Tests/Fixtures/Hostile/avif_grid_odd_tiles.avif"
    static let odd422 = "Tests/Fixtures/Hostile/avif_grid_odd_tiles_422.avif"
    static let even = "Tests/Fixtures/Hostile/avif_grid_even_tiles.avif"
    static let heic = "Tests/Fixtures/Formats/heic_plain.heic"

    static func refusal(_ error: ImageError) -> Bool {
        guard case .unsupportedVariant(_, let format, let detail) = error else { return false }
        return format == .avif && detail.contains("tiles of 4:2:") && detail.contains("memory it does not own")
    }

    @Test("Grids of odd 4:2:0 and 4:2:2 tiles are refused in process, whole or as a region; even tiles decode")
    func inProcess() throws {
        var centre = DecodingOptions(pixelFormat: .rgb24)
        centre.region = .centerSquare
        for options in [DecodingOptions(), centre] {
            for (file, tiles) in [(Self.odd, "63x63"), (Self.odd422, "63x64")] {
                #expect {
                    try ImageDecoder.decode(data: try Fixtures.data(file), options: options)
                } throws: { error in
                    guard let error = error as? ImageError else { return false }
                    return Self.refusal(error) && "\(error)".contains("\(tiles) tiles")
                }
            }
            let control = try ImageDecoder.decode(data: try Fixtures.data(Self.even), options: options)
            #expect(control.storedSize == PixelSize(width: 128, height: 128))
        }
    }

    @Test("A child refuses the grid too, and is retired after the refusal and after its last decode")
    func children() throws {
        var configuration = DecoderIsolation.Configuration(children: 1)
        configuration.decodesPerChild = 3
        let pool = DecoderIsolation(configuration)
        let odd = try Fixtures.data(Self.odd)
        #expect {
            try pool.decode(data: odd, format: .avif, options: DecodingOptions(), source: "odd.avif")
        } throws: { error in (error as? ImageError).map(Self.refusal) ?? false }
        #expect(pool.statistics.retired == 1 && pool.statistics.childrenStarted == 1)
        let heic = try Fixtures.data(Self.heic)
        let expected = try ImageDecoder.decode(data: heic)
        for _ in 0..<4 {
            #expect(try pool.decode(data: heic, format: .heif, options: DecodingOptions(), source: "p") == expected)
        }
        // A new child after the refusal; it served 3 decodes and was retired; a third for the 4th.
        #expect(pool.statistics.childrenStarted == 3 && pool.statistics.retired == 2, "\(pool.statistics)")
    }

    @Test("The parent reads the declared geometry itself")
    func declared() throws {
        let plain = try #require(HEIFDeclaredGeometry(try Fixtures.data(Self.heic)))
        // Coded 132x98 (HEVC's 8-pixel blocks), shown 131x97 through its clean aperture.
        #expect(plain == HEIFDeclaredGeometry(coded: PixelSize(width: 132, height: 98), turned: false, cropped: true))
        let turned = try #require(HEIFDeclaredGeometry(try Fixtures.data("Tests/Fixtures/Formats/heic_irot.heic")))
        #expect(turned.turned && turned.upright == PixelSize(width: 98, height: 132))
        let grid = try #require(HEIFDeclaredGeometry(try Fixtures.data(Self.odd)))
        #expect(grid.coded == PixelSize(width: 252, height: 252))
        #expect(HEIFDeclaredGeometry(Data("not a HEIF at all".utf8)) == nil)
        #expect(HEIFDeclaredGeometry(try Fixtures.data(Self.heic).prefix(40)) == nil)
    }

    @Test("A child's answer whose geometry the file does not declare is not believed")
    func lies() throws {
        let data = try Fixtures.data(Self.heic)
        let honest = try ImageDecoder.decode(data: data)
        let declared = HEIFDeclaredGeometry(data)
        let options = DecodingOptions()
        #expect(DecoderWire.problem(with: honest, format: .heif, options: options, declared: declared) == nil)
        var lies: [(String, DecodedImage)] = []
        var image = honest
        image.storedSize = PixelSize(width: 400, height: 400)
        lies.append(("stored size", image))
        image = honest
        image.storedSize = PixelSize(width: Int.max, height: 2)
        lies.append(("stored size", image))
        image = honest
        image.fullSize = PixelSize(width: 200, height: 200)
        lies.append(("full size", image))
        image = honest
        image.region = PixelRect(x: 100, y: 0, width: 132, height: 98)
        lies.append(("region", image))
        image = honest
        image.region = PixelRect(x: 0, y: 0, width: 66, height: 49)
        lies.append(("pixels for a region", image))
        image = honest
        image.scaleNumerator = 0
        lies.append(("scale", image))
        image = honest
        image.orientation = .right
        lies.append(("orientation", image))
        image = honest
        image.format = .avif
        lies.append(("AVIF image", image))
        for (what, lie) in lies {
            let problem = DecoderWire.problem(with: lie, format: .heif, options: options, declared: declared)
            #expect(problem?.contains(what) == true, "\(what): \(problem ?? "believed")")
        }
    }
}
