import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// A scaled decode of a progressive JPEG reads only the scans it needs
/// (``DecodingOptions/progressiveScans``). The reference is libjpeg reading every scan
/// (``ProgressiveScans/all``), which equals Pillow's `draft()` at the same scale
/// (`JPEGDecoderTests.draftMatchesPillow`).
@Suite("Progressive JPEGs: a scaled decode reads only the scans it needs")
struct ProgressiveScanTests {
    /// Pillow-written progressive files (libjpeg's standard ten-scan script; six for grey).
    static let variants = [
        "wide_420_progressive", "wide_444_progressive", "tall_422_progressive", "tall_gray_progressive",
        "slim_420_progressive",
    ]

    static func data(_ name: String) throws -> Data {
        try Fixtures.data("Tests/Fixtures/ImageReference/variants/\(name).jpg")
    }

    /// Decodes at exactly `numerator`/8 of `size` (the fixtures' sizes), reading `scans`.
    static func decode(
        _ data: Data, numerator: Int, scans: ProgressiveScans, size: PixelSize = PixelSize(width: 203, height: 133)
    ) throws -> DecodedImage {
        var options = DecodingOptions(
            pixelFormat: .rgb24,
            minimumSize: PixelSize(width: (size.width * numerator + 7) / 8, height: (size.height * numerator + 7) / 8))
        options.scalesByPowersOfTwo = true
        options.progressiveScans = scans
        let image = try ImageDecoder.decode(data: data, options: options)
        #expect(image.scaleNumerator == numerator)
        return image
    }

    @Test("Reading the needed scans gives the pixels of reading every scan, at each scale", arguments: variants)
    func neededIsExact(name: String) throws {
        let data = try Self.data(name)
        let size = try ImageDecoder.decode(data: data).pixels.size
        for numerator in [1, 2, 4] {
            let all = try Self.decode(data, numerator: numerator, scans: .all, size: size)
            let needed = try Self.decode(data, numerator: numerator, scans: .needed, size: size)
            #expect(needed.pixels.size == all.pixels.size)
            #expect(needed.pixels.packedBytes == all.pixels.packedBytes, "\(name) at \(numerator)/8")
        }
    }

    /// At 1/4 the approximation leaves out luma's scans of band 6...63 and its refinements, so
    /// the pixels differ, slightly: measured mean 0.3-1.3 levels on photos of 3-12 MP.
    @Test("Reading the low frequencies only stays close to reading every scan", arguments: variants)
    func lowFrequenciesAreClose(name: String) throws {
        let data = try Self.data(name)
        let size = try ImageDecoder.decode(data: data).pixels.size
        let all = try Self.decode(data, numerator: 2, scans: .all, size: size)
        let low = try Self.decode(data, numerator: 2, scans: .lowFrequencies, size: size)
        let difference = ByteDifference(low.pixels.packedBytes, all.pixels.packedBytes)
        #expect(difference.meanAbsolute > 0, "no scan was left out: \(difference)")
        #expect(difference.meanAbsolute < 3, "\(difference)")
        let dc = try Self.decode(data, numerator: 1, scans: .lowFrequencies, size: size)
        let dcAll = try Self.decode(data, numerator: 1, scans: .all, size: size)
        #expect(dc.pixels.packedBytes == dcAll.pixels.packedBytes, "1/8 reads DC only either way")
    }

    /// The offsets of the file's scan headers (FF DA).
    static func scanOffsets(_ bytes: [UInt8]) -> [Int] {
        (0..<(bytes.count - 1)).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA }
    }

    /// The last scan of a 4:2:0 file is luma's final AC refinement, which a decode at 1/8
    /// never uses: a marker planted in its data makes a reader of every scan refuse the file
    /// (the Huffman decoder hits it). Refused alike by the needed scans: bytes after an end of
    /// image that follows a dropped scan send the file to a read of every scan (issue 54).
    @Test("A marker planted in a scan 1/8 does not need is refused as a read of every scan refuses")
    func markerInUnneededScan() throws {
        let clean = [UInt8](try Self.data("wide_420_progressive"))
        let last = try #require(Self.scanOffsets(clean).last)
        let header = Int(clean[last + 2]) << 8 | Int(clean[last + 3])
        #expect(clean[last + 2 + header - 3] == 1 && clean[last + 2 + header - 2] == 63, "an AC scan")
        var damaged = clean
        let middle = last + 2 + header + (clean.count - last - 2 - header) / 2
        damaged[middle] = 0xFF
        damaged[middle + 1] = 0xD9
        for scans in [ProgressiveScans.all, .needed] {
            #expect(throws: ImageError.self) { try Self.decode(Data(damaged), numerator: 1, scans: scans) }
        }
    }

    @Test("A progressive file cut short in a scan 1/8 does not need is still refused as truncated")
    func truncatedInDroppedScan() throws {
        let clean = [UInt8](try Self.data("wide_420_progressive"))
        let last = try #require(Self.scanOffsets(clean).last)
        let cut = Data(clean[..<(last + (clean.count - last) / 2)])
        for scans in [ProgressiveScans.all, .needed, .lowFrequencies] {
            #expect(throws: ImageError.truncated(source: "image data", format: .jpeg)) {
                try Self.decode(cut, numerator: 1, scans: scans)
            }
        }
    }

    @Test("A scan bomb is refused at 1/8 too, though its scans are ones 1/8 would not read")
    func scanBombAtOneEighth() throws {
        var options = DecodingOptions(minimumSize: .square(1))
        options.progressiveScans = .needed
        let few = try ImageDecoder.decode(data: Data(ResourceLimitTests.progressiveJPEG(acScans: 40)), options: options)
        #expect(few.scaleNumerator == 1)
        #expect(few.pixels.packedBytes == [128])
        let reason =
            "more than 100 scans (each scan is another pass over the image; encoders write at most a few dozen)"
        #expect(throws: ImageError.corrupt(source: "image data", format: .jpeg, reason: reason)) {
            try ImageDecoder.decode(data: Data(ResourceLimitTests.progressiveJPEG(acScans: 300)), options: options)
        }
    }
}
