import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// Issue 43's crafted photos (tools/images/make_hostile_fixtures.py): files whose declared sizes
/// lie about the work a decoder will do. Each is refused before the work, or decoded within the
/// pixel limit; each refusal has a well-formed control made the same way, so that what refuses is
/// the limit and not a broken file.
@Suite("Hostile photos, round five")
struct HostileFormatTests {
    static let folder = "Tests/Fixtures/Hostile/"

    static func decode(_ name: String, _ options: DecodingOptions = DecodingOptions(pixelFormat: .rgb24))
        throws(ImageError) -> DecodedImage
    {
        let data: Data
        do { data = try Fixtures.data(folder + name) } catch { throw .unreadableFile(path: name, reason: "\(error)") }
        return try ImageDecoder.decode(data: data, options: options, source: name)
    }

    /// Before: libheif read the 100x100 `ispe`, then decoded the grid's 32768x32768 and the process
    /// died in libheif (SIGSEGV after 4.8 GB). The grid's own size is checked now.
    @Test(
        "A grid whose descriptor is larger than its ispe is refused by the grid's size",
        arguments: [
            "heic_grid_lying_ispe.heic", "avif_grid_lying_ispe.avif",
        ])
    func lyingGrid(name: String) {
        do {
            let image = try Self.decode(name)
            Issue.record("\(name) decoded to \(image.pixels.size)")
        } catch {
            switch error {
            case .tooManyPixels(_, let width, let height, _):
                #expect(width == 32768 && height == 32768, "\(error)")
            case .corrupt(_, _, let detail) where detail.contains("ispe"):
                // Its descriptor and its ispe disagree: refused before anything is allocated.
                #expect(detail.contains("says 32768x32768 and its ispe 100x100"), "\(error)")
            case .unsupportedVariant(_, _, let detail), .corrupt(_, _, let detail):
                // libheif's own security limit, where it speaks first.
                #expect(detail.lowercased().contains("limit"), "\(error)")
            default:
                Issue.record("\(name): \(error)")
            }
        }
    }

    /// Before: a 192x128 grid whose `ispe` said 190x126 or 194x130, or whose descriptor said
    /// 190x126 under a 192x128 `ispe`, decoded (libheif 1.19 reports the `ispe`'s size); pillow-heif's
    /// libheif 1.23 refuses each ("Decoded image does not have the size signaled in the file"), and
    /// now so does NetRunner, naming both sizes. The control, whose sizes agree, decodes.
    @Test(
        "A grid whose ispe and descriptor disagree by a pixel or two is refused, as pillow-heif refuses it",
        arguments: [
            ("heic_grid_ispe_smaller.heic", "192x128", "190x126"),
            ("heic_grid_ispe_larger.heic", "192x128", "194x130"),
            ("heic_grid_output_smaller.heic", "190x126", "192x128"),
        ])
    func ispeMismatch(name: String, descriptor: String, ispe: String) throws {
        do {
            let image = try Self.decode(name)
            Issue.record("\(name) decoded to \(image.pixels.size)")
        } catch {
            guard case .corrupt(_, _, let detail) = error else {
                Issue.record("\(name): \(error)")
                return
            }
            #expect(detail.contains("says \(descriptor) and its ispe \(ispe)"), "\(error)")
        }
        let control = try Self.decode("heic_grid_small.heic")
        #expect(control.pixels.size == PixelSize(width: 192, height: 128))
    }

    /// Before: 2,500 decodes of a 64x64 tile (18,769 took 112 s). libheif 1.19 refuses more than
    /// 1,000 items itself now, and under that a tile is charged at least 256x256 pixels against the
    /// limit; the 3x2 control decodes, and each of its cells is the tile.
    @Test("A grid of thousands of tiny tiles is refused; a small grid of the same tile decodes")
    func manyTiles() throws {
        do {
            let image = try Self.decode("heic_grid_many_tiles.heic")
            Issue.record("2,500 tiles decoded to \(image.pixels.size)")
        } catch {
            switch error {
            case .unsupportedVariant(_, _, let detail), .corrupt(_, _, let detail):
                #expect(detail.contains("tiles") || detail.lowercased().contains("limit"), "\(error)")
            default:
                Issue.record("\(error)")
            }
        }
        // Under a lower limit, the same 6 tiles that make 192x128 are charged 6 x 256 x 256 pixels.
        do {
            let image = try Self.decode(
                "heic_grid_small.heic", DecodingOptions(pixelFormat: .rgb24, maximumPixelCount: 200_000))
            Issue.record("6 tiles charged 393,216 pixels decoded under a 200,000 limit: \(image.pixels.size)")
        } catch {
            guard case .unsupportedVariant(_, _, let detail) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(detail.contains("a grid of 6 tiles of 64x64"), "\(detail)")
        }
        let grid = try Self.decode("heic_grid_small.heic")
        let tile = try Self.decode("heic_tile.heic")
        #expect(grid.pixels.size == PixelSize(width: 192, height: 128))
        #expect(tile.pixels.size == PixelSize(width: 64, height: 64))
        let gridBytes = grid.pixels.packedBytes
        let tileBytes = tile.pixels.packedBytes
        var differing = 0
        for y in 0..<128 {
            for x in 0..<192 {
                for c in 0..<3 where gridBytes[(y * 192 + x) * 3 + c] != tileBytes[((y % 64) * 64 + x % 64) * 3 + c] {
                    differing += 1
                }
            }
        }
        #expect(differing == 0, "\(differing) bytes of the grid differ from its tile")
    }

    /// Found by the fuzz suite with libheif 1.19 (pillow-heif's 1.23 refuses the file: "Decoded
    /// image does not have the size signaled in the file"): one byte of the control grid changed,
    /// so that its tiles' `ispe` says 64x79 over 64x64 bitstreams; libheif pastes each decoded tile
    /// at the declared size and corrupts its heap (glibc aborts the process). Never decoded in
    /// this process: in a decoder process, where it costs that decode an error.
    @Test("A grid whose tiles decode smaller than they declare crashes libheif 1.19, in a decoder process only")
    func tileTallerThanItsBitstream() throws {
        let data = try Fixtures.data(Self.folder + "heic_grid_tile_taller.heic")
        let pool = DecoderIsolation(.init(children: 1))
        do {
            let image = try pool.decode(data: data, format: .heif, options: DecodingOptions(), source: "taller.heic")
            // A libheif that checks the tiles' size refuses it instead; one that decodes it must
            // not give more than the grid's 192x128.
            #expect(image.pixels.size == PixelSize(width: 192, height: 128))
        } catch {
            switch error {
            case .decoderFailed(_, _, let reason): #expect(reason.contains("crashed"), "\(reason)")
            case .corrupt, .unsupportedVariant: break
            default: Issue.record("\(error)")
            }
        }
        // The pool goes on: the control decodes.
        let control = try pool.decode(
            data: try Fixtures.data(Self.folder + "heic_grid_small.heic"), format: .heif, options: DecodingOptions(),
            source: "small.heic")
        #expect(control.pixels.size == PixelSize(width: 192, height: 128))
    }

    /// pillow-heif 1.8.1's `tests/images/heif_corrupted/corrupted.heic`: libheif 1.19 aborts on an
    /// assertion (`bitstream.cc:169`) reading it through `heif_context_read_from_file`; read from
    /// memory, as the shim does, it refuses it. Decoded in a decoder process only, so that a
    /// libheif that aborts on it costs this test an error, not the test process.
    @Test("A HEIC that makes libheif 1.19 assert from a file is refused from memory, in a decoder process")
    func bitstreamAssertion() throws {
        let data = try Fixtures.data(Self.folder + "heic_bitstream_assert.heic")
        let pool = DecoderIsolation(.init(children: 1))
        do {
            let image = try pool.decode(data: data, format: .heif, options: DecodingOptions(), source: "assert.heic")
            Issue.record("decoded to \(image.pixels.size)")
        } catch {
            switch error {
            case .corrupt(let path, _, let detail):
                #expect(path == "assert.heic" && detail.contains("Insufficient input data"), "\(error)")
            default: Issue.record("\(error)")
            }
        }
        let control = try pool.decode(
            data: try Fixtures.data(Self.folder + "heic_grid_small.heic"), format: .heif, options: DecodingOptions(),
            source: "small.heic")
        #expect(control.pixels.size == PixelSize(width: 192, height: 128))
    }

    /// Before: every row of a 1000x1000 frame was decompressed to fill an 8x8 screen, and an
    /// interlaced one past the limit was decoded whole.
    @Test("A GIF frame past its screen is cropped without reading the rows below it, or refused")
    func gifFramePastScreen() throws {
        let limit = DecodingOptions(pixelFormat: .rgb24, maximumPixelCount: 100_000)
        let image = try Self.decode("gif_frame_past_screen.gif", limit)
        #expect(image.pixels.size == PixelSize(width: 8, height: 8))
        // The generator's pattern: index (x / 3 + y / 5) % 4 of black, white, red, blue.
        let palette: [[UInt8]] = [[0, 0, 0], [255, 255, 255], [200, 30, 30], [30, 30, 200]]
        let bytes = image.pixels.packedBytes
        for y in 0..<8 {
            for x in 0..<8 {
                let expected = palette[(x / 3 + y / 5) % 4]
                #expect(Array(bytes[(y * 8 + x) * 3..<(y * 8 + x) * 3 + 3]) == expected, "(\(x), \(y))")
            }
        }
        do {
            let decoded = try Self.decode("gif_frame_past_screen_interlaced.gif", limit)
            Issue.record("an interlaced 1000x1000 frame was read whole for an 8x8 screen: \(decoded.pixels.size)")
        } catch {
            guard case .unsupportedVariant(_, _, let detail) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(detail.contains("1000x1000"), "\(detail)")
        }
        // Within the limit it decodes, as it did: the same pixels as the plain one.
        let interlaced = try Self.decode("gif_frame_past_screen_interlaced.gif")
        #expect(interlaced.pixels.packedBytes == bytes)
    }

    /// The first frame of an animation is composed in our buffer, as WebPAnimDecoder (Pillow)
    /// composes it: transparent black, the frame at its offset.
    @Test("A WebP animation's first frame at an offset equals Pillow's decode, byte for byte")
    func webpAnimationOffset() throws {
        let image = try Self.decode("webp_anim_offset.webp", DecodingOptions(pixelFormat: .rgba32))
        #expect(image.pixels.size == PixelSize(width: 64, height: 48))
        let expected = try [UInt8](Fixtures.data(Self.folder + "webp_anim_offset.rgba"))
        #expect(image.pixels.packedBytes == expected)
        let rgb = try Self.decode("webp_anim_offset.webp")
        let dropped = stride(from: 0, to: expected.count, by: 4).flatMap { expected[$0..<$0 + 3] }
        #expect(rgb.pixels.packedBytes == dropped)
        // The canvas past the limit is refused from the header, before any canvas exists.
        #expect(throws: ImageError.self) {
            try Self.decode("webp_anim_huge_canvas.webp", DecodingOptions(maximumPixelCount: 1_000_000))
        }
    }
}
