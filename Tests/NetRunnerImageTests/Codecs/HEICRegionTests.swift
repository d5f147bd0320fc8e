import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// A HEIC grid decodes only the tiles its region covers (``DecodingOptions/region``), with the
/// pixels of a whole decode there; the whole decode is held to pillow-heif's.
@Suite("HEIC grids: a region decodes only the tiles it covers")
struct HEICRegionTests {
    struct Fixture: Sendable, CustomStringConvertible {
        var name: String
        var orientation: Int
        var size: PixelSize
        var checksum: String
        var description: String { name }
    }

    static let fixtures: [Fixture] = {
        guard
            let data = try? Fixtures.data("Tests/Fixtures/Grids/grids.json"),
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let entries = json["fixtures"] as? [String: [String: Any]]
        else { return [] }
        return entries.keys.sorted().compactMap { name in
            guard let entry = entries[name], let orientation = entry["orientation"] as? Int,
                let width = entry["width"] as? Int, let height = entry["height"] as? Int,
                let checksum = entry["fnv1a64"] as? String
            else { return nil }
            return Fixture(
                name: name, orientation: orientation, size: PixelSize(width: width, height: height), checksum: checksum)
        }
    }()

    static func fnv1a64(_ bytes: [UInt8]) -> String {
        var value: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x100_0000_01B3 }
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    static func path(_ fixture: Fixture) -> String { Fixtures.path("Tests/Fixtures/Grids/\(fixture.name).heic") }

    @Test("The grids are there")
    func present() {
        #expect(Self.fixtures.count == 4)
    }

    @Test("A grid's whole decode is pillow-heif's, turned as its irot says", arguments: fixtures)
    func wholeMatchesPillow(fixture: Fixture) throws {
        let image = try ImageDecoder.decode(contentsOf: Self.path(fixture), options: .init(pixelFormat: .rgb24))
        #expect(image.pixels.size == fixture.size)
        #expect(image.region == PixelRect(x: 0, y: 0, width: fixture.size.width, height: fixture.size.height))
        #expect(Self.fnv1a64(image.pixels.packedBytes) == fixture.checksum)
    }

    /// 320x160 in 64x64 tiles: the centre square (x 80..<240) lies in columns 1 to 3 of 5, so
    /// 9 of 15 tiles are decoded, 192x160 pixels (turned with the image).
    @Test("The centre square decodes 3 of 5 columns of tiles, with the whole decode's pixels", arguments: fixtures)
    func centreSquare(fixture: Fixture) throws {
        let whole = try ImageDecoder.decode(contentsOf: Self.path(fixture), options: .init(pixelFormat: .rgb24))
        var options = DecodingOptions(pixelFormat: .rgb24)
        options.region = .centerSquare
        let part = try ImageDecoder.decode(contentsOf: Self.path(fixture), options: options)
        #expect(part.fullSize == fixture.size)
        let turned = fixture.orientation == 6 || fixture.orientation == 8
        #expect(part.pixels.size == (turned ? PixelSize(width: 160, height: 192) : PixelSize(width: 192, height: 160)))
        #expect(part.region.size == part.pixels.size)
        let square = PixelRect.centerSquare(in: fixture.size)
        #expect(part.region.x <= square.x && part.region.y <= square.y)
        #expect(part.region.x + part.region.width >= square.x + square.width)
        #expect(part.region.y + part.region.height >= square.y + square.height)
        let expected = try whole.pixels.cropped(to: part.region)
        #expect(part.pixels.packedBytes == expected.packedBytes)
    }

    /// Its thumbnail is stored upright (python/heif_iphone.py), so it is chosen for a turned grid.
    @Test("A turned grid's thumbnail has the shape the grid shows", arguments: fixtures)
    func thumbnailTurned(fixture: Fixture) throws {
        var options = DecodingOptions(pixelFormat: .rgb24)
        options.minimumThumbnailSize = .square(32)
        let image = try ImageDecoder.decode(contentsOf: Self.path(fixture), options: options)
        let turned = fixture.orientation == 6 || fixture.orientation == 8
        #expect(image.pixels.size == (turned ? PixelSize(width: 48, height: 96) : PixelSize(width: 96, height: 48)))
    }

    @Test("A decoder process returns the same region")
    func isolated() throws {
        let fixture = try #require(Self.fixtures.first { $0.orientation == 6 })
        var options = DecodingOptions(pixelFormat: .rgb24)
        options.region = .centerSquare
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.path(fixture)))
        let local = try ImageDecoder.decode(data: data, options: options)
        let pool = DecoderIsolation(.init(children: 1))
        let remote = try pool.decode(data: data, format: .heif, options: options, source: "grid")
        #expect(remote.region == local.region)
        #expect(remote.fullSize == local.fullSize)
        #expect(remote.pixels.packedBytes == local.pixels.packedBytes)
    }
}
