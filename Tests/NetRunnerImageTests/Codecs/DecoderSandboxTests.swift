import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// Issue 54: a decoder child runs in a seccomp sandbox (decoder_sandbox.c) from before it reads
/// its first byte: every HEIC and AVIF still decodes there to the same pixels, and the child can
/// neither create a file, open one, create a socket nor start a program.
@Suite("Decoder children in their sandbox")
struct DecoderSandboxTests {
    static let formats = "Tests/Fixtures/Formats/"
    /// The fixtures pillow-heif and Pillow decode byte for byte as we do (PhotoFormatTests).
    static let referenced = [
        "heic_plain.heic", "heic_irot.heic", "heic_irot_even.heic", "heic_rotate_mirror.heic", "heic_alpha.heic",
        "avif_plain.avif", "avif_irot_limited.avif", "avif_444.avif",
    ]
    /// Grids, tiles and refusals: the child's answer must be the in-process one, errors included.
    static let hostile =
        [
            "heic_grid_small.heic", "heic_grid_lying_ispe.heic", "heic_grid_many_tiles.heic", "heic_tile.heic",
            "heic_bitstream_assert.heic", "avif_grid_even_tiles.avif", "avif_grid_lying_ispe.avif",
            "avif_grid_odd_tiles.avif", "avif_grid_odd_tiles_422.avif",
        ].map { "Tests/Fixtures/Hostile/" + $0 }
        + ["heic_grid.heic", "heic_grid_rotate_90_cw.heic", "heic_grid_rotate_180.heic"].map {
            "Tests/Fixtures/Grids/" + $0
        }

    static func outcome(_ body: () throws(ImageError) -> DecodedImage) -> Result<DecodedImage, ImageError> {
        Result { () throws(ImageError) -> DecodedImage in try body() }
    }

    @Test("Every HEIC and AVIF decodes in a sandboxed child to Pillow's pixels and the in-process image")
    func sameImages() throws {
        var configuration = DecoderIsolation.Configuration(children: 1)
        // One decode per child: each fixture meets a freshly sandboxed process.
        configuration.decodesPerChild = 1
        let pool = DecoderIsolation(configuration)
        var region = DecodingOptions(pixelFormat: .rgb24)
        region.region = .centerSquare
        var thumbnail = DecodingOptions()
        thumbnail.minimumThumbnailSize = .square(32)
        var decodes = 0
        for name in Self.referenced {
            let data = try Fixtures.data(Self.formats + name)
            let format = try #require(ImageFormat.sniff(data.prefix(12)))
            let image = try pool.decode(
                data: data, format: format, options: DecodingOptions(pixelFormat: .rgb24), source: name)
            let expected = try [UInt8](Fixtures.data(Self.formats + name.split(separator: ".")[0] + ".rgb"))
            #expect(image.pixels.packedBytes == expected, "\(name) against Pillow")
            decodes += 1
            for options in [DecodingOptions(), region, thumbnail] {
                let here = try ImageDecoder.decode(data: data, options: options, source: name)
                let there = try pool.decode(data: data, format: format, options: options, source: name)
                #expect(here == there, "\(name) \(options)")
                decodes += 1
            }
        }
        for file in Self.hostile {
            let data = try Fixtures.data(file)
            let format = try #require(ImageFormat.sniff(data.prefix(12)))
            for options in [DecodingOptions(), region] {
                let here = Self.outcome { () throws(ImageError) in
                    try ImageDecoder.decode(data: data, options: options, source: file)
                }
                let there = Self.outcome { () throws(ImageError) in
                    try pool.decode(data: data, format: format, options: options, source: file)
                }
                #expect(here == there, "\(file) \(options)")
                decodes += 1
            }
        }
        let statistics = pool.statistics
        #expect(statistics.crashes == 0 && statistics.timeouts == 0, "\(statistics)")
        #if os(Linux)
            #expect(statistics.sandboxed == decodes && statistics.unsandboxed == 0, "\(statistics)")
        #endif
    }

    #if os(Linux)
        /// The probe runs in the child after its sandbox is installed, as a hostile file's code
        /// would: without the filter it would create the file, open /etc/hostname and get a socket.
        @Test("A sandboxed child cannot create or open a file, nor create a socket")
        func noFilesNoNetwork() throws {
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let target = folder.path("written-by-decoder")
            var configuration = DecoderIsolation.Configuration(children: 1)
            configuration.environment = ["NETRUNNER_DECODER_FAULT": "probe-sandbox:" + target]
            let pool = DecoderIsolation(configuration)
            let data = try Fixtures.data(Self.formats + "heic_plain.heic")
            let result = Self.outcome { () throws(ImageError) in
                try pool.decode(data: data, format: .heif, options: DecodingOptions(), source: "probe")
            }
            guard case .failure(.decoderFailed(_, _, let reason)) = result else {
                Issue.record("the probe answered \(result)")
                return
            }
            #expect(reason == "create: EPERM, read: EPERM, socket: EPERM")
            #expect(!FileManager.default.fileExists(atPath: target))
            #expect(pool.statistics.sandboxed == 1 && pool.statistics.crashes == 0)
        }

        @Test("A sandboxed child that tries to run a program is killed by SIGSYS")
        func noPrograms() throws {
            var configuration = DecoderIsolation.Configuration(children: 1)
            configuration.environment = ["NETRUNNER_DECODER_FAULT": "probe-exec"]
            let pool = DecoderIsolation(configuration)
            let data = try Fixtures.data(Self.formats + "heic_plain.heic")
            let result = Self.outcome { () throws(ImageError) in
                try pool.decode(data: data, format: .heif, options: DecodingOptions(), source: "probe")
            }
            guard case .failure(.decoderFailed(_, _, let reason)) = result else {
                Issue.record("the probe answered \(result)")
                return
            }
            #expect(reason.contains("SIGSYS"), "\(reason)")
            #expect(pool.statistics.crashes == 1)
        }
    #endif
}
